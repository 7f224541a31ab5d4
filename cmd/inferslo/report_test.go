package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A month's report is backtest over the month: the same JSON figures (SLI,
// budget spent, alert intervals per SLO group), the burn of February
// paging model-a.
func TestAMonthsReportHasBacktestsFiguresForTheMonth(t *testing.T) {
	if os.Getenv("INFERSLO_LONG") == "" {
		t.Skip("replays a month twice (about a minute of CPU); INFERSLO_LONG=1 runs it (CI's backtest step)")
	}
	dir := t.TempDir()
	specFile := filepath.Join(dir, "assist.yaml")
	if err := os.WriteFile(specFile, []byte(backtestSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	srv := burnServer(t, from.Add(-14*24*time.Hour), from.Add(10*24*time.Hour+12*time.Hour))
	runJSON := func(args ...string) map[string]any {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{args[0], specFile, "--prometheus", srv.URL, "--read", "raw", "--json"}, args[1:]...), &stdout, &stderr); code != exitOK {
			t.Fatalf("%s: exit %d\n%s", args[0], code, stderr.String())
		}
		var out map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, stdout.String())
		}
		return out
	}
	report := runJSON("report", "--period", "2026-02")
	back := runJSON("backtest", "--from", "2026-02-01T00:00:00Z", "--to", "2026-03-01T00:00:00Z")
	r, _ := json.Marshal(report)
	b, _ := json.Marshal(back)
	if !bytes.Equal(r, b) {
		t.Fatalf("the report differs from backtest over the month:\nreport:   %s\nbacktest: %s", r, b)
	}
	alerts, _ := report["alerts"].([]any)
	slos, _ := report["slos"].([]any)
	if len(alerts) == 0 || len(slos) != 2 {
		t.Fatalf("want the burn's alerts and both models' figures: %s", r)
	}
	first := alerts[0].(map[string]any)
	if first["severity"] != "page" || first["labels"].(map[string]any)["model_name"] != "model-a" || first["firedAt"].(string)[:10] != "2026-02-11" {
		t.Errorf("first alert %v, want model-a paged on February 11", first)
	}
}
