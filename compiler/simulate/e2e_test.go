package simulate

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/internal/exporter"
	"github.com/inferslo/inferslo/compiler/internal/promserver"
	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

// e2eSLOs are a TTFT and an errors SLO on vLLM with a one-hour window, so
// the workbook's page windows shrink to seconds (5s and 30s long, 4s short)
// and a real Prometheus evaluating every second pages within a minute.
func e2eSLOs(t *testing.T) model.Set {
	var slos []model.SLO
	for _, role := range []string{"ttft", "errors"} {
		slo := slotest.VLLM(t, role, "99%")
		slo.Name = "e2e-" + role
		slo.Service.Name = "e2e"
		slo.Window = time.Hour
		slo.Evaluation = time.Second
		slo.ScrapeInterval = time.Second
		tiers, err := model.WorkbookTiersOf(model.Severities, time.Hour, 4*time.Second, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// A `for` of several evaluations makes the pending state visible.
		for i := range tiers {
			tiers[i].For = 5 * time.Second
		}
		slo.Alerting.Tiers = tiers
		slo.Alerting.NoData = false
		slo.Inference.Selector = `model_name="llama-3-8b"`
		sel := slo.Inference.Selector
		if role == "ttft" {
			slo.SLI.Total.Expr = `vllm:time_to_first_token_seconds_count{` + sel + `}`
			slo.SLI.Good.Expr = `vllm:time_to_first_token_seconds_bucket{le="0.5",` + sel + `}`
		} else {
			slo.SLI.Total.Expr = `vllm:request_success_total{` + sel + `}`
			slo.SLI.Bad.Expr = `vllm:request_success_total{finished_reason="error",` + sel + `}`
		}
		slos = append(slos, slo)
	}
	return model.Set{SLOs: slos}
}

// TestRealPrometheusPagesDuringABurnAndResolvesAfter runs the Prometheus
// binary named by INFERSLO_PROMETHEUS (built from the pinned module) with
// the generated rules, scraping a client_golang exporter with vLLM's
// metrics, and follows the page alerts through the HTTP API.
func TestRealPrometheusPagesDuringABurnAndResolvesAfter(t *testing.T) {
	bin := os.Getenv("INFERSLO_PROMETHEUS")
	if bin == "" {
		t.Skip("set INFERSLO_PROMETHEUS to a prometheus binary to run the end-to-end test")
	}
	if os.Getenv("INFERSLO_LONG") == "" {
		t.Skip("runs a real Prometheus for about a minute; INFERSLO_LONG=1 runs it (CI's step of its own)")
	}
	set := e2eSLOs(t)
	files, err := irules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "e2e.rules.yaml"), files[0].Data, 0o644); err != nil {
		t.Fatal(err)
	}

	exp := exporter.New("llama-3-8b", 2, 0.1, 0.75)
	exp.Set(0.005, 0.005)
	addr := exp.Serve(t, 100)

	base := (&promserver.Server{T: t, Bin: bin, Dir: dir, Global: "{scrape_interval: 1s, evaluation_interval: 1s}",
		Config: fmt.Sprintf("rule_files: [e2e.rules.yaml]\nscrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: [%q]}]\n", addr)}).Start()

	start := time.Now()
	states := map[string]string{}
	logStates := func() map[string]string {
		now := pageStates(t, base)
		for _, slo := range set.SLOs {
			if now[slo.Name] != states[slo.Name] {
				t.Logf("+%5.1fs %s page alert: %s", time.Since(start).Seconds(), slo.Name, orInactive(now[slo.Name]))
			}
		}
		states = now
		return now
	}
	// Healthy traffic first: half the budget rate, no page.
	t.Logf("+%5.1fs healthy traffic (0.5%% slow, 0.5%% failed)", time.Since(start).Seconds())
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for slo, st := range logStates() {
			t.Fatalf("%s page alert is %s during healthy traffic", slo, st)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("+%5.1fs burn: 25%% slow, 25%% failed (25x the budget rate)", time.Since(start).Seconds())
	exp.Set(0.25, 0.25)
	seen := map[string]map[string]bool{}
	for _, slo := range set.SLOs {
		seen[slo.Name] = map[string]bool{}
	}
	allFiring := func(now map[string]string) bool {
		for _, slo := range set.SLOs {
			if now[slo.Name] != "firing" {
				return false
			}
		}
		return true
	}
	promserver.WaitFor(t, 90*time.Second, "every page alert firing", func() bool {
		now := logStates()
		for slo, st := range now {
			seen[slo][st] = true
		}
		return allFiring(now)
	})
	for _, slo := range set.SLOs {
		if !seen[slo.Name]["pending"] {
			t.Errorf("%s page alert fired without being seen pending first", slo.Name)
		}
	}
	t.Logf("+%5.1fs recovery: healthy traffic again", time.Since(start).Seconds())
	exp.Set(0.005, 0.005)
	promserver.WaitFor(t, 90*time.Second, "every page alert resolved", func() bool {
		return len(logStates()) == 0
	})
	t.Logf("+%5.1fs all page alerts resolved", time.Since(start).Seconds())
}

// pageStates maps SLO to the state of its page alert, from /api/v1/alerts.
func pageStates(t *testing.T, base string) map[string]string {
	resp, err := http.Get(base + "/api/v1/alerts")
	if err != nil {
		t.Fatalf("alerts API: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("alerts API: %v", err)
	}
	out := map[string]string{}
	for _, a := range body.Data.Alerts {
		if a.Labels["alertname"] == model.AlertBurn && a.Labels["severity"] == "page" {
			out[a.Labels["slo"]] = a.State
		}
	}
	return out
}

func orInactive(s string) string {
	if s == "" {
		return "inactive"
	}
	return s
}
