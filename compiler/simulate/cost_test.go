package simulate

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

func TestInfersloRulesTouchFewerSamplesThanTheNaiveBaseline(t *testing.T) {
	set := model.Set{SLOs: []model.SLO{vllmSLO(t, "errors", "99.9%")}}
	rep, err := Cost(set, CostOptions{Shape: Shape{Pods: 20, Models: 2}, History: 30 * time.Minute, Evaluations: 2})
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
	slo := vllmSLO(b, "errors", "99.9%")
	g, err := irules.Group(slo, nil)
	if naive {
		g, err = NaiveGroup(slo)
	}
	if err != nil {
		b.Fatal(err)
	}
	opts := CostOptions{Shape: Shape{Pods: 200, Models: 4}, History: time.Hour}
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
	b.ReportMetric(float64(run.h.counted.samples), "samples/eval")
	b.ReportMetric(float64(run.h.counted.projected), "projected-samples/eval")
}

func TestProjectionScalesEachQueryToItsFullRange(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		samples int64
		at      time.Duration
		want    int64
	}{
		{"a 28d range selector read over 1h of history reads 672 times more", `avg_over_time(x[4w])`, 60, 0, 40320},
		{"a range within the history is counted as read", `rate(x[5m])`, 10, 0, 10},
		{"an hourly subquery that found two steps of data reads 672 steps in 28d", `sum_over_time(x[4w:1h])`, 2, 30 * time.Minute, 672},
		{"the same subquery on the hour found three steps", `sum_over_time(x[4w:1h])`, 3, time.Hour, 672},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := queryCount{history: time.Hour}
			c.add(tt.query, tt.samples, epoch().Add(tt.at))
			if c.projected != tt.want || c.samples != tt.samples {
				t.Errorf("projected %d (counted %d), want %d", c.projected, c.samples, tt.want)
			}
		})
	}
}
