package realcode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/dskit/middleware"
)

// spec is one errors SLO at 1m scrapes over three days of history.
const spec = `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: gated}
spec:
  engine: vllm
  selector: {namespace: llm}
  window: 28d
  scrapeInterval: 1m
  objectives:
    - {sli: errors, target: 99%}
`

// history writes three days of one model's request counters: healthy at a
// twentieth of the budget rate, but for an hour on the third day in which
// 20% of requests fail (20x the budget rate).
func history(t *testing.T, path string, start time.Time, burn [2]time.Time) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "# TYPE vllm:request_success counter")
	for _, reason := range []string{"stop", "error"} {
		var cum float64
		for ts := start; ts.Before(start.Add(72 * time.Hour)); ts = ts.Add(time.Minute) {
			ratio := 0.0005
			if !ts.Before(burn[0]) && ts.Before(burn[1]) {
				ratio = 0.2
			}
			if reason == "stop" {
				ratio = 1 - ratio
			}
			cum += 600 * ratio
			fmt.Fprintf(w, "vllm:request_success_total{namespace=\"llm\",model_name=\"m\",pod=\"p\",finished_reason=%q} %g %d\n", reason, math.Floor(cum), ts.Unix())
		}
	}
	fmt.Fprintln(w, "# EOF")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestBacktestThroughDskitsTenantGate backfills a real Prometheus, puts
// dskit's AuthenticateUser in front of it, as Mimir does with
// multi-tenancy on, and runs `inferslo backtest`: with --http-config
// sending X-Scope-OrgID the run finds the burn; without it the error names
// the server's 401.
func TestBacktestThroughDskitsTenantGate(t *testing.T) {
	prom, tool := os.Getenv("INFERSLO_PROMETHEUS"), os.Getenv("INFERSLO_PROMTOOL")
	if prom == "" || tool == "" {
		t.Skip("set INFERSLO_PROMETHEUS and INFERSLO_PROMTOOL")
	}
	dir := t.TempDir()
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	burn := [2]time.Time{start.Add(60 * time.Hour), start.Add(61 * time.Hour)}
	om := filepath.Join(dir, "history.om")
	history(t, om, start, burn)
	if out, err := exec.Command(tool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", "--max-block-duration=744h", om, filepath.Join(dir, "data")).CombinedOutput(); err != nil {
		t.Fatalf("backfill: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global: {scrape_interval: 1m}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--storage.tsdb.retention.time=10y", "--web.listen-address="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("prometheus not ready after 60s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	target, err := url.Parse("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	gate := &http.Server{Handler: middleware.AuthenticateUser.Wrap(httputil.NewSingleHostReverseProxy(target))}
	gateAddr := freeAddr(t)
	ln, err := net.Listen("tcp", gateAddr)
	if err != nil {
		t.Fatal(err)
	}
	go gate.Serve(ln)
	t.Cleanup(func() { gate.Close() })

	specFile := filepath.Join(dir, "gated.yaml")
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	httpCfg := filepath.Join(dir, "http.yaml")
	if err := os.WriteFile(httpCfg, []byte("http_headers: {X-Scope-OrgID: {values: [inference]}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"backtest", specFile, "--prometheus", "http://" + gateAddr,
		"--from", start.Add(24 * time.Hour).Format(time.RFC3339), "--to", start.Add(72 * time.Hour).Format(time.RFC3339), "--json"}
	out, stderr, err := run(t, append(args, "--http-config", httpCfg)...)
	if err != nil {
		t.Fatalf("with the tenant header: %v\n%s", err, stderr)
	}
	var rep struct {
		Alerts []struct {
			AlertName string    `json:"alertname"`
			Severity  string    `json:"severity"`
			FiredAt   time.Time `json:"firedAt"`
		} `json:"alerts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("backtest --json: %v\n%s", err, out)
	}
	pages := 0
	for _, a := range rep.Alerts {
		if a.AlertName == "ErrorBudgetBurn" && a.Severity == "page" {
			pages++
			if a.FiredAt.Before(burn[0]) || a.FiredAt.After(burn[1]) {
				t.Errorf("the page fired at %s, outside the burn %s to %s", a.FiredAt, burn[0], burn[1])
			}
		}
	}
	if pages != 1 {
		t.Errorf("%d pages through the gate, want the burn's one:\n%s", pages, out)
	}
	t.Logf("through the gate: %d alerts, the page among them", len(rep.Alerts))
	_, stderr, err = run(t, args...)
	if err == nil || !strings.Contains(stderr, "401") {
		t.Errorf("without the tenant header: error %v, stderr %q; want the gate's 401 named", err, stderr)
	}
	t.Logf("without it: %s", strings.TrimSpace(stderr))
}
