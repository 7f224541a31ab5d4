package rules

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"

	"github.com/inferslo/inferslo/compiler/model"
)

// TestATimeSliceSLOCountsBadSlicesAndLeavesQuietOnesOut replays an hour of
// 2m slices through the Prometheus rule engine: slices 3, 7 and 8 are slow
// (or fail 10% of requests), slices 10 and 11 have no traffic, the others
// are fast (1% failures). The hour's error ratio must count the bad slices
// among the slices with traffic, or average their ratios for
// RatioTimeslices.
func TestATimeSliceSLOCountsBadSlicesAndLeavesQuietOnesOut(t *testing.T) {
	bad := map[int]bool{3: true, 7: true, 8: true}
	quiet := map[int]bool{10: true, 11: true}
	// series writes one counter per minute, growing by inc(slice) in each
	// minute of a slice; slice k is (2k-2, 2k] minutes.
	series := func(name string, inc func(slice int) float64) string {
		v, vals := 0.0, []string{"0"}
		for m := 1; m <= 60; m++ {
			if k := (m + 1) / 2; !quiet[k] {
				v += inc(k)
			}
			vals = append(vals, fmt.Sprint(v))
		}
		return name + " " + strings.Join(vals, " ")
	}
	flat := func(n float64) func(int) float64 { return func(int) float64 { return n } }
	fast := func(k int) float64 {
		if bad[k] {
			return 0
		}
		return 100
	}
	failed := func(k int) float64 {
		if bad[k] {
			return 10
		}
		return 1
	}
	histogram := strings.Join([]string{series(`x_bucket{le="0.25"}`, fast), series(`x_bucket{le="0.5"}`, flat(100)), series(`x_bucket{le="+Inf"}`, flat(100))}, "\n")
	requests := strings.Join([]string{series(`req_total{code="500"}`, failed), series(`req_total{code="200"}`, func(k int) float64 { return 100 - failed(k) })}, "\n")
	ratio := model.SLI{Counter: true, Total: &model.Query{Expr: `sum(req_total)`}, Bad: &model.Query{Expr: `sum(req_total{code="500"})`}}
	tests := []struct {
		name   string
		sli    model.SLI
		slices model.Timeslices
		series string
		want   float64
	}{
		{
			name: "a p99 above 300ms makes a slice bad",
			sli: model.SLI{Threshold: &model.Threshold{Query: model.Query{Expr: `histogram_quantile(0.99, sum by (le) (rate(x_bucket[2m])))`},
				Op: "<=", Value: model.NewDecimal(3, 10)}},
			series: histogram,
			want:   3.0 / 28,
		},
		{
			name:   "a slice below 95% good events is bad",
			sli:    ratio,
			slices: model.Timeslices{Target: model.NewDecimal(95, 100)},
			series: requests,
			want:   3.0 / 28,
		},
		{
			name:   "RatioTimeslices averages the slices' error ratios",
			sli:    ratio,
			slices: model.Timeslices{Average: true},
			series: requests,
			want:   (3*0.1 + 25*0.01) / 28,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tiers, err := model.WorkbookTiersOf(model.Severities, 30*24*time.Hour, 2*time.Minute, 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			ts := tt.slices
			ts.Window = 2 * time.Minute
			slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Source: "t.yaml", SLI: tt.sli, Timeslices: &ts,
				Objective: model.NewDecimal(99, 100), Window: 30 * 24 * time.Hour, Evaluation: 2 * time.Minute,
				ScrapeInterval: 30 * time.Second, Alerting: model.Alerting{Tiers: tiers, NoData: true}}
			ll, _ := evaluate(t, slo, tt.series, time.Hour)
			q, err := ll.QueryEngine().NewInstantQuery(context.Background(), ll.Storage(), nil,
				model.Selector(model.ErrorRatio, slo, time.Hour), time.Unix(0, 0).UTC().Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			res := q.Exec(context.Background())
			v, ok := res.Value.(promql.Vector)
			if res.Err != nil || !ok || len(v) != 1 {
				t.Fatalf("error ratio over 1h = %v (%v), want one sample", res.Value, res.Err)
			}
			if math.Abs(v[0].F-tt.want) > 1e-9 {
				t.Errorf("error ratio over 1h = %v, want %v", v[0].F, tt.want)
			}
		})
	}
}

// TestAThresholdSliceIsGoodWhenItsShareOfGoodEvaluationsMeetsTheTarget
// replays an hour of 4m slices, each holding four 1m evaluations of a p99
// over the last 2m (one minute of counter growth: the evaluations tile the
// slice), through the Prometheus rule engine. Each minute is fast, slow or
// quiet; a slice is good when at least timeSliceTarget of its evaluations
// with traffic have a p99 at most 300ms.
func TestAThresholdSliceIsGoodWhenItsShareOfGoodEvaluationsMeetsTheTarget(t *testing.T) {
	// Minutes of each slice: s slow, q quiet, anything else fast.
	minutes := map[int]string{3: "sss.", 5: ".s.s", 7: "ssss", 9: "qqs.", 11: "qqqq", 12: "qss."}
	state := func(m int) byte { // minute m is (m-1, m]
		k, p := (m+3)/4, (m-1)%4
		if pat, ok := minutes[k]; ok {
			return pat[p]
		}
		return '.'
	}
	series := func(name string, inc func(s byte) float64) string {
		v, vals := 0.0, []string{"0"}
		for m := 1; m <= 60; m++ {
			if s := state(m); s != 'q' {
				v += inc(s)
			}
			vals = append(vals, fmt.Sprint(v))
		}
		return name + " " + strings.Join(vals, " ")
	}
	fast := func(s byte) float64 {
		if s == 's' {
			return 0
		}
		return 100
	}
	all := func(byte) float64 { return 100 }
	histogram := strings.Join([]string{series(`x_bucket{le="0.25"}`, fast), series(`x_bucket{le="0.5"}`, all), series(`x_bucket{le="+Inf"}`, all)}, "\n")
	tests := []struct {
		name   string
		target model.Decimal
		want   float64
	}{
		// Slices 3 (1 of 4 good), 7 (0 of 4) and 12 (1 of 3 with traffic)
		// are bad; 5 (2 of 4) and 9 (1 of 2) meet half; 11 has no traffic.
		{"at timeSliceTarget 0.5 a slice with half its evaluations good is good", model.NewDecimal(5, 10), 3.0 / 14},
		{"at timeSliceTarget 0.75 the same half-good slices are bad", model.NewDecimal(75, 100), 5.0 / 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tiers, err := model.WorkbookTiersOf(model.Severities, 30*24*time.Hour, 4*time.Minute, 4*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			ts := model.Timeslices{Window: 4 * time.Minute, Target: tt.target, Evaluation: time.Minute}
			slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Source: "t.yaml", Timeslices: &ts,
				SLI: model.SLI{Threshold: &model.Threshold{Query: model.Query{Expr: `histogram_quantile(0.99, sum by (le) (rate(x_bucket[2m])))`},
					Op: "<=", Value: model.NewDecimal(3, 10), Range: 2 * time.Minute, Quantile: 0.99}},
				Objective: model.NewDecimal(99, 100), Window: 30 * 24 * time.Hour, Evaluation: 4 * time.Minute,
				ScrapeInterval: 15 * time.Second, Alerting: model.Alerting{Tiers: tiers, NoData: true}}
			ll, _ := evaluate(t, slo, histogram, time.Hour)
			q, err := ll.QueryEngine().NewInstantQuery(context.Background(), ll.Storage(), nil,
				model.Selector(model.ErrorRatio, slo, time.Hour), time.Unix(0, 0).UTC().Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			res := q.Exec(context.Background())
			v, ok := res.Value.(promql.Vector)
			if res.Err != nil || !ok || len(v) != 1 {
				t.Fatalf("error ratio over 1h = %v (%v), want one sample", res.Value, res.Err)
			}
			if math.Abs(v[0].F-tt.want) > 1e-9 {
				t.Errorf("error ratio over 1h = %v, want %v", v[0].F, tt.want)
			}
		})
	}
}
