package cost

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
)

func TestInfersloRulesTouchFewerSamplesThanTheNaiveBaseline(t *testing.T) {
	set := model.Set{SLOs: []model.SLO{slotest.VLLM(t, "errors", "99.9%")}}
	rep, err := Measure(set, Options{Shape: synth.Shape{Pods: 20, Models: 2}, History: 30 * time.Minute, Evaluations: 2})
	if err != nil {
		t.Fatal(err)
	}
	g, err := irules.Group(set.SLOs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Inferslo.Rules != len(g.Rules) {
		t.Errorf("counted %d rules, the group has %d", rep.Inferslo.Rules, len(g.Rules))
	}
	if rep.Inferslo.Samples <= 0 || rep.Naive.Samples <= 0 {
		t.Fatalf("no samples counted: %+v", rep)
	}
	// Every naive window rescans 20 pods' raw counters; inferslo reads them
	// over the base window only.
	if rep.Inferslo.Projected*10 > rep.Naive.Projected {
		t.Errorf("inferslo projected %d samples, naive %d: expected at least 10x fewer", rep.Inferslo.Projected, rep.Naive.Projected)
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "naive") || !strings.Contains(b.String(), "20 pods x 2 models") {
		t.Errorf("table:\n%s", b.String())
	}
	t.Log("\n" + b.String())
}

// BenchmarkEvaluateInferslo and BenchmarkEvaluateNaive time one evaluation
// of a 99.9% errors SLO's group at 200 pods x 4 models with 1h of history
// (written before the timer starts), and report the samples the engine
// touched per evaluation.
func BenchmarkEvaluateInferslo(b *testing.B) { benchmarkCost(b, false) }

func BenchmarkEvaluateNaive(b *testing.B) { benchmarkCost(b, true) }

func benchmarkCost(b *testing.B, naive bool) {
	slo := slotest.VLLM(b, "errors", "99.9%")
	g, err := irules.Group(slo, nil)
	if naive {
		g, err = NaiveGroup(slo)
	}
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Shape: synth.Shape{Pods: 200, Models: 4}, History: time.Hour}
	run, err := prepareCost(slo, g, opts, !naive)
	if err != nil {
		b.Fatal(err)
	}
	defer run.close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := run.evalOnce(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(run.h.Counted.Samples), "samples/eval")
	b.ReportMetric(float64(run.h.Counted.Projected), "projected-samples/eval")
}

// rowsOf returns the rows of the rules named, by name.
func rowsOf(rows []RuleRow, names ...string) map[string]RuleRow {
	out := map[string]RuleRow{}
	for _, r := range rows {
		for _, n := range names {
			if strings.HasPrefix(r.Rule, n) {
				out[n] = r
			}
		}
	}
	return out
}

func TestTheSheddingSignalsReadTheirBucketsAndTheQuantileOnlyPastTheHighest(t *testing.T) {
	measure := func(factor model.Decimal) map[string]RuleRow {
		t.Helper()
		slo := slotest.VLLM(t, "ttft", "99%")
		sh := model.DefaultShedding()
		sh.Shed.Factor, sh.ReduceContext.Factor = factor, factor
		slo.Alerting.Shedding = &sh
		rep, err := Measure(model.Set{SLOs: []model.SLO{slo}}, Options{Shape: synth.Shape{Pods: 20, Models: 2}, History: 10 * time.Minute, Evaluations: 1})
		if err != nil {
			t.Fatal(err)
		}
		return rowsOf(rep.Inferslo.ByRule, irules.ShedQuantile, irules.LoadShed, irules.ContextReduce)
	}
	// 0.5s × 10,000 is past vLLM's highest finite bucket: the quantile is
	// recorded once and each signal reads the recording (one sample per
	// group), not the histogram's buckets of every pod again.
	past := measure(model.NewDecimal(10000, 1))
	q, ok := past[irules.ShedQuantile]
	if !ok || q.PerSecond <= 0 {
		t.Fatalf("the quantile recording read nothing; rows: %+v", past)
	}
	for _, name := range []string{irules.LoadShed, irules.ContextReduce} {
		if r := past[name]; r.PerSecond*100 > q.PerSecond {
			t.Errorf("past the buckets, %s reads %.2f samples/s, the quantile %.2f: the signal reads the histogram again", name, r.PerSecond, q.PerSecond)
		}
	}
	// 1s is a bucket, 1.5s lies between two: the first signal reads those
	// buckets (and the count), the second reads the first's recording, and
	// nothing reads the rest.
	for _, factor := range []model.Decimal{model.NewDecimal(2, 1), model.NewDecimal(3, 1)} {
		at := measure(factor)
		if r, ok := at[irules.ShedQuantile]; ok {
			t.Errorf("at %s× the quantile is still recorded, reading %.2f samples/s", factor, r.PerSecond)
		}
		shed, ok := at[irules.LoadShed]
		if !ok || shed.PerSecond <= 0 || shed.PerSecond*5 > q.PerSecond {
			t.Errorf("at %s× %s reads %.2f samples/s (present: %v), the quantile over every bucket %.2f", factor, irules.LoadShed, shed.PerSecond, ok, q.PerSecond)
		}
		if r := at[irules.ContextReduce]; r.PerSecond*100 > q.PerSecond {
			t.Errorf("at %s× %s reads %.2f samples/s: it does not read the first signal's recording", factor, irules.ContextReduce, r.PerSecond)
		}
	}
}

func TestTheCostByRuleAddsUpToTheTotalCostliestFirst(t *testing.T) {
	slo := slotest.VLLM(t, "errors", "99.9%")
	rep, err := Measure(model.Set{SLOs: []model.SLO{slo}}, Options{Shape: synth.Shape{Pods: 20, Models: 2}, History: 10 * time.Minute, Evaluations: 1})
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, r := range rep.Inferslo.ByRule {
		sum += r.PerSecond
	}
	if total := rep.Inferslo.PerSecond; sum < total*0.999 || sum > total*1.001 {
		t.Errorf("rows add up to %.2f samples/s, the total is %.2f", sum, total)
	}
	for i, r := range rep.Inferslo.ByRule[1:] {
		if r.PerSecond > rep.Inferslo.ByRule[i].PerSecond {
			t.Errorf("row %d (%s, %.2f samples/s) reads more than the row before it (%.2f)", i+1, r.Rule, r.PerSecond, rep.Inferslo.ByRule[i].PerSecond)
		}
	}
}

func TestSumsReadAtOffsetsPastTheHistoryAreProjectedAsRead(t *testing.T) {
	slo := slotest.VLLM(t, "errors", "99.9%")
	rep, err := Measure(model.Set{SLOs: []model.SLO{slo}}, Options{Shape: synth.Shape{Pods: 2, Models: 1}, History: 10 * time.Minute, Evaluations: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The 4w sums add ten 2d19h12m sums, each a sum and a count: 20
	// samples per 1m evaluation, though only the latest exists after 10m.
	name := irules.EventsSums + `{window="4w"}`
	row, ok := rowsOf(rep.Inferslo.ByRule, name)[name]
	if !ok {
		t.Fatalf("no row %s in %+v", name, rep.Inferslo.ByRule)
	}
	if got := row.PerSecond * 60; got < 19.99 || got > 20.01 {
		t.Errorf("%s reads %.2f samples per evaluation, want 20", name, got)
	}
}
