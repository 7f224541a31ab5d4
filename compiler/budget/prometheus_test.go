package budget

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/backtest"
	"github.com/inferslo/inferslo/compiler/internal/promserver"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/spec"
)

// specs are three errors SLOs over the same vLLM counters: one per model,
// and one grouped by model. Rules evaluate every 15s, so a server started
// over backfilled history records a budget within seconds.
const specs = `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: %s}
spec:
  engine: vllm
  selector: {namespace: llm%s}
  %s
  window: 28d
  scrapeInterval: 15s
  evaluationInterval: 15s
  objectives:
    - {sli: errors, target: 99%%}
`

// writeHistory writes two hours of vLLM request counters up to end, one
// sample every 15s: model-a fails 0.05% of its requests (a twentieth of
// the budget rate), model-b 20% (20x: it burns).
func writeHistory(path string, end time.Time) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "# TYPE vllm:request_success counter")
	ratios := map[string]float64{"model-a": 0.0005, "model-b": 0.20}
	for _, m := range []string{"model-a", "model-b"} {
		for _, reason := range []string{"stop", "error"} {
			share := ratios[m]
			if reason == "stop" {
				share = 1 - share
			}
			var cum float64
			for t := end.Add(-2 * time.Hour); !t.After(end); t = t.Add(15 * time.Second) {
				cum += 100 * 15 * share
				fmt.Fprintf(w, "vllm:request_success_total{namespace=\"llm\",model_name=%q,pod=\"pod-0\",finished_reason=%q} %g %d\n", m, reason, math.Round(cum), t.Unix())
			}
		}
	}
	fmt.Fprintln(w, "# EOF")
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestTheBudgetOfTheLiveRulesGatesTheModelThatBurned backfills a real
// Prometheus with two hours of a healthy model and a burning one, loads
// the rules inferslo compiles for them, and reads the budget they record:
// the healthy model's SLO keeps 95% and passes a 50% gate, the burning
// one's is overspent and fails it, the grouped SLO holds both, and a time
// before the rules first ran is an error, not a full budget.
func TestTheBudgetOfTheLiveRulesGatesTheModelThatBurned(t *testing.T) {
	promBin, toolBin := os.Getenv("INFERSLO_PROMETHEUS"), os.Getenv("INFERSLO_PROMTOOL")
	if promBin == "" || toolBin == "" {
		t.Skip("set INFERSLO_PROMETHEUS and INFERSLO_PROMTOOL to read the budget from a real Prometheus")
	}
	dir := t.TempDir()
	started := time.Now()
	om := filepath.Join(dir, "history.om")
	if err := writeHistory(om, started.Truncate(15*time.Second)); err != nil {
		t.Fatal(err)
	}
	promserver.Run(t, toolBin, "tsdb", "create-blocks-from", "openmetrics", "--quiet", om, filepath.Join(dir, "data"))

	var sources []spec.Source
	for _, s := range []struct{ name, selector, groupBy string }{
		{"healthy", `, model_name: model-a`, ""},
		{"burned", `, model_name: model-b`, ""},
		{"fleet", "", "groupBy: [model_name]"},
	} {
		sources = append(sources, spec.Source{Name: s.name + ".yaml", Data: []byte(fmt.Sprintf(specs, s.name, s.selector, s.groupBy))})
	}
	res, err := spec.Parse(sources...)
	if err != nil || len(res.Set.SLOs) != 3 {
		t.Fatalf("specs: %v %v", err, res.Problems)
	}
	files, err := rules.Build(res.Set, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		name := filepath.Base(f.Path)
		if err := os.WriteFile(filepath.Join(dir, name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, fmt.Sprintf("%q", name))
	}
	p := &promserver.Server{T: t, Bin: promBin, Dir: dir, Config: "rule_files: [" + strings.Join(names, ", ") + "]\n"}
	t.Cleanup(p.Stop)
	src := backtest.Source{URL: p.Start(), Timeout: 10 * time.Second}
	ctx := context.Background()
	slo := map[string]model.Set{}
	for _, s := range res.Set.SLOs {
		slo[strings.TrimSuffix(s.Name, "-errors")] = model.Set{SLOs: []model.SLO{s}}
	}

	// The rules record the budget at their first evaluation; each SLO's
	// group evaluates at its own moment of the interval.
	half := 0.5
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		err = nil
		for _, set := range slo {
			if _, e := Read(ctx, set, src, time.Now(), &half); e != nil {
				err = e
			}
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no budget recorded 60s after the server started: %v", err)
		}
	}
	t.Logf("budget recorded %s after the history was written", time.Since(started).Round(time.Millisecond))

	tests := []struct {
		name      string
		set       model.Set
		remaining []float64
	}{
		{"the healthy model keeps 95% of its budget and passes", slo["healthy"], []float64{0.95}},
		{"the burning model has overspent 19 budgets and fails", slo["burned"], []float64{-19}},
		{"the grouped slo holds each model's budget, in group order", slo["fleet"], []float64{0.95, -19}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Read(ctx, tt.set, src, time.Now(), &half)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Groups) != len(tt.remaining) {
				t.Fatalf("%d groups, want %d: %+v", len(r.Groups), len(tt.remaining), r.Groups)
			}
			below := 0
			for i, g := range r.Groups {
				if math.Abs(g.Remaining-tt.remaining[i]) > 0.01*math.Max(1, math.Abs(tt.remaining[i])) {
					t.Errorf("%s %v: %g of the budget left, want %g", g.SLO, g.Labels, g.Remaining, tt.remaining[i])
				}
				if g.Window != "4w" {
					t.Errorf("%s: window %q, want the SLO window 4w", g.SLO, g.Window)
				}
				if tt.remaining[i] < half {
					below++
				}
			}
			if r.Below() != below {
				t.Errorf("%d groups below the gate, want %d", r.Below(), below)
			}
		})
	}

	t.Run("a time before the rules first ran is an error naming the series", func(t *testing.T) {
		_, err := Read(ctx, slo["healthy"], src, started.Add(-time.Hour), &half)
		if err == nil || !strings.Contains(err.Error(), `slo healthy-errors: the server holds no inferslo:error_budget_remaining:ratio{slo="healthy-errors"}`) {
			t.Fatalf("got %v, want the absent series named", err)
		}
	})
}
