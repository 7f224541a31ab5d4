package rules

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/model"
)

// goodputSet is a TTFT and a latency SLO of one service on one engine's
// histograms (ttft, and tpot or itl as role says).
func goodputSet(t *testing.T, role string) model.Set {
	t.Helper()
	tiers, err := model.WorkbookTiersOf(model.Severities, 28*24*time.Hour, 2*time.Minute, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	slo := func(role, le string) model.SLO {
		return model.SLO{Name: "chat-" + role, Service: model.Service{Name: "chat"}, Source: "t.yaml",
			SLI:       model.SLI{Counter: true, Total: &model.Query{Expr: role + "_count"}, Good: &model.Query{Expr: role + `_bucket{le="` + le + `"}`}},
			Objective: model.NewDecimal(99, 100), Window: 28 * 24 * time.Hour, Evaluation: time.Minute, ScrapeInterval: 15 * time.Second,
			Alerting:  model.Alerting{Tiers: tiers, NoData: true},
			Inference: &model.Inference{Engine: "vllm", Role: role, Selector: `model_name="m"`}}
	}
	return model.Set{SLOs: []model.SLO{slo("ttft", "0.25"), slo(role, "0.05")}}
}

func TestGoodputBoundsAreRecordedFromTheTwoErrorRatios(t *testing.T) {
	tests := []struct {
		name                 string
		ttftGood, tpotGood   int // of 64 requests a minute
		wantLower, wantUpper float64
	}{
		{"a few misses of each bound goodput between 1 − both and the worse share", 60, 56, 0.8125, 0.875},
		{"misses that add up to more than every request leave a lower bound of zero", 32, 16, 0, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := goodputSet(t, "tpot")
			series := fmt.Sprintf("ttft_count 0+64x40\nttft_bucket{le=\"0.25\"} 0+%dx40\ntpot_count 0+64x40\ntpot_bucket{le=\"0.05\"} 0+%dx40", tt.ttftGood, tt.tpotGood)
			start := time.Unix(0, 0).UTC()
			at := start.Add(30 * time.Minute)
			ll, _ := evaluateSet(t, set, series, start, at)
			for name, want := range map[string]float64{model.GoodputLower: tt.wantLower, model.GoodputUpper: tt.wantUpper} {
				sel := fmt.Sprintf(`%s{slo="chat-ttft+chat-tpot",sli="goodput",service="chat",window=%q}`, name, model.FormatDuration(set.SLOs[0].BaseWindow()))
				q, err := ll.QueryEngine().NewInstantQuery(context.Background(), ll.Storage(), nil, sel, at)
				if err != nil {
					t.Fatal(err)
				}
				res := q.Exec(context.Background())
				v, ok := res.Value.(promql.Vector)
				if res.Err != nil || !ok || len(v) != 1 {
					t.Fatalf("%s = %v (%v), want one sample", sel, res.Value, res.Err)
				}
				if math.Abs(v[0].F-want) > 1e-9 {
					t.Errorf("%s = %v, want %v", name, v[0].F, want)
				}
			}
		})
	}
}

func TestGoodputPairsOnlyPerRequestHistograms(t *testing.T) {
	for _, tc := range []struct {
		name, role string
		want       int
	}{
		{"TTFT and TPOT observe each request once, so they pair", "tpot", 4},
		{"ITL observes decode steps, so it pairs with nothing", "itl", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			groups, _, err := serviceGroups(goodputSet(t, tc.role).SLOs, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, g := range groups {
				for _, r := range g.Rules {
					if strings.HasPrefix(r.Record, "inferslo:goodput:") {
						got++
					}
				}
			}
			if got != tc.want {
				t.Errorf("goodput rules = %d, want %d (lower and upper over the base and SLO windows)", got, tc.want)
			}
		})
	}
}

// TestPromtoolRecordsGoodputBounds runs the bounds through promtool's rule
// unit tests when INFERSLO_PROMTOOL names one.
func TestPromtoolRecordsGoodputBounds(t *testing.T) {
	bin := os.Getenv("INFERSLO_PROMTOOL")
	if bin == "" {
		t.Skip("set INFERSLO_PROMTOOL to run promtool")
	}
	dir := t.TempDir()
	set := goodputSet(t, "tpot")
	files, err := Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "chat.rules.yaml"), files[0].Data, 0o644); err != nil {
		t.Fatal(err)
	}
	window := model.FormatDuration(set.SLOs[0].BaseWindow())
	sample := func(name string, v float64) map[string]any {
		return map[string]any{"labels": name + `{service="chat",sli="goodput",slo="chat-ttft+chat-tpot",window="` + window + `"}`, "value": v}
	}
	test := map[string]any{
		"rule_files":          []string{"chat.rules.yaml"},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"name":     "goodput lies between 1 - (1/16 + 1/8) and 1 - 1/8",
			"interval": "1m",
			"input_series": []any{
				map[string]string{"series": "ttft_count", "values": "0+64x40"},
				map[string]string{"series": `ttft_bucket{le="0.25"}`, "values": "0+60x40"},
				map[string]string{"series": "tpot_count", "values": "0+64x40"},
				map[string]string{"series": `tpot_bucket{le="0.05"}`, "values": "0+56x40"},
			},
			"promql_expr_test": []any{
				map[string]any{"expr": model.Selector(model.GoodputLower, model.SLO{Name: "chat-ttft+chat-tpot"}, set.SLOs[0].BaseWindow()), "eval_time": "30m", "exp_samples": []any{sample(model.GoodputLower, 0.8125)}},
				map[string]any{"expr": model.Selector(model.GoodputUpper, model.SLO{Name: "chat-ttft+chat-tpot"}, set.SLOs[0].BaseWindow()), "eval_time": "30m", "exp_samples": []any{sample(model.GoodputUpper, 0.875)}},
			},
		}},
	}
	data, err := yaml.Marshal(test)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "chat.test.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "test", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s\n%s", err, out, data)
	}
}
