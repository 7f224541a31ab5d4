package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// backtestSpec is one errors SLO per model, at 2m scrapes.
const backtestSpec = `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata:
  name: assist
spec:
  engine: vllm
  selector: {namespace: llm}
  groupBy: [model_name]
  window: 7d
  scrapeInterval: 2m
  evaluationInterval: 4m
  objectives:
    - {sli: errors, target: 99%}
`

// burnServer answers the Prometheus API for one vLLM pod per model over
// days: healthy (0.1% failed), but for model-a failing 30% of requests
// for an hour from burnAt.
func burnServer(t *testing.T, origin, burnAt time.Time) *httptest.Server {
	models := []string{"model-a", "model-b"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/series":
			fmt.Fprint(w, `{"status":"success","data":[{"__name__":"vllm:request_success_total"},{"__name__":"vllm:request_success_total"}]}`)
		case "/api/v1/query_range":
			sec := func(k string) float64 { v, _ := strconv.ParseFloat(r.FormValue(k), 64); return v }
			start, end, step := sec("start"), sec("end"), sec("step")
			var b bytes.Buffer
			b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
			for i, m := range models {
				for j, reason := range []string{"stop", "error"} {
					if i+j > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"metric":{"__name__":"vllm:request_success_total","namespace":"llm","pod":"pod-0","model_name":%q,"finished_reason":%q},"values":[`, m, reason)
					// 10 requests a second: count the failed ones up to t.
					failed := func(t float64) float64 {
						d := t - float64(origin.Unix())
						burn := 0.0
						if m == "model-a" {
							b0 := float64(burnAt.Unix())
							burn = max(0, min(t, b0+3600)-b0) * 10 * (0.3 - 0.001)
						}
						return d*10*0.001 + burn
					}
					for ts := start; ts <= end; ts += step {
						if ts > start {
							b.WriteByte(',')
						}
						v := failed(ts)
						if reason == "stop" {
							v = (ts-float64(origin.Unix()))*10 - v
						}
						fmt.Fprintf(&b, `[%s,"%d"]`, strconv.FormatFloat(ts, 'f', -1, 64), int64(v))
					}
					b.WriteString(`]}`)
				}
			}
			b.WriteString(`]}}`)
			w.Write(b.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestBacktestReportInChromium backtests three days with a fast burn on
// one model against a fake Prometheus, writes the HTML report with -o and
// opens it in headless Chromium: both groups' charts drawn, the page
// shaded on model-a's charts and its zoomed view, no alert on model-b's, no
// console message and no request besides the page. The screenshot goes to
// docs/backtest-report.png with -update-screenshot.
func TestBacktestReportInChromium(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("INFERSLO_CHROMIUM")
	if bin == "" {
		t.Skip("set INFERSLO_CHROMIUM to a chromium binary to run the browser test")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	specFile := filepath.Join(dir, "assist.yaml")
	if err := os.WriteFile(specFile, []byte(backtestSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	to := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	from := to.Add(-3 * 24 * time.Hour)
	srv := burnServer(t, from.Add(-7*24*time.Hour), from.Add(36*time.Hour))
	out := filepath.Join(dir, "report")
	var stdout, stderr bytes.Buffer
	cmd := &backtestCmd{History: history{Specs: []string{specFile}, Prometheus: srv.URL, Read: "raw", Output: out, Timeout: time.Minute, MaxSamples: 1e7},
		From: from.Format(time.RFC3339), To: to.Format(time.RFC3339)}
	if err := cmd.Run(&env{stdout: &stdout, stderr: &stderr}); err != nil {
		t.Fatalf("backtest: %v\n%s", err, stderr.String())
	}
	// The burn pages, then tickets while the longer windows catch up, on
	// model-a only.
	alerts := regexp.MustCompile(`(?m)^ErrorBudgetBurn .*$`).FindAllString(stdout.String(), -1)
	if len(alerts) == 0 || !regexp.MustCompile(`^ErrorBudgetBurn\s+page\s+assist-errors\s+model_name=model-a`).MatchString(alerts[0]) {
		t.Fatalf("want a page on model-a first:\n%s", stdout.String())
	}
	for _, a := range alerts {
		if !strings.Contains(a, "model_name=model-a") {
			t.Errorf("an alert on another model than the one that burned: %s", a)
		}
	}

	files, fetched := serve(t, out)
	dom, browserErr := chromium(t, bin, files.URL+"/", "--dump-dom")
	sections := map[string]string{}
	for _, m := range sectionRE.FindAllStringSubmatch(dom, -1) {
		sections[m[1]] = m[2]
	}
	a, zoom, b := sections["dashboard-slo-0"], sections["dashboard-slo-0-page"], sections["dashboard-slo-1"]
	if !hasText(a, "model_name=model-a") || !hasText(b, "model_name=model-b") {
		t.Fatalf("sections %v: want model-a's and model-b's", len(sections))
	}
	for name, sec := range map[string]string{"model-a": a, "model-a zoomed": zoom, "model-b": b} {
		if n := len(seriesPathD.FindAllString(sec, -1)); n == 0 {
			t.Errorf("%s: no line drawn", name)
		}
	}
	if n := len(pageBand.FindAllString(a, -1)); n != 2 {
		t.Errorf("model-a: %d page bands, want one on each of its 2 charts", n)
	}
	if !pageBand.MatchString(zoom) {
		t.Error("the zoomed view of model-a's page shades no page")
	}
	if strings.Contains(b, `class="band `) {
		t.Error("model-b, which never burned, is shaded")
	}
	for _, l := range consoleLines(browserErr) {
		t.Errorf("console: %s", l)
	}
	if extra := fetchedBesides(fetched(), "/"); len(extra) > 0 {
		t.Errorf("the page fetched %v besides itself", extra)
	}
	shot := filepath.Join(t.TempDir(), "backtest-report.png")
	if *updateScreenshot {
		shot = filepath.Join(root, "..", "..", "docs", "backtest-report.png")
	}
	chromium(t, bin, files.URL+"/", "--screenshot="+shot, "--window-size=1400,4000")
	checkScreenshot(t, shot)
}
