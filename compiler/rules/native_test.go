package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
)

func TestCounterQueriesOnNativeHistogramsRateInsideTheFunctions(t *testing.T) {
	tests := []struct {
		name, query, want, err string
	}{
		{
			name:  "the count under a threshold is rated per series, NaN dropped, then summed by group",
			query: `histogram_count(h{a="b"}) * histogram_fraction(0, 0.5, h{a="b"})`,
			want:  `sum by (model) (histogram_count(rate(h{a="b"}[5m])) * histogram_fraction(0, 0.5, rate(h{a="b"}[5m])) >= 0)`,
		},
		{
			name:  "the fraction may come first",
			query: `histogram_fraction(0, 0.5, h) * histogram_count(h)`,
			want:  `sum by (model) (histogram_count(rate(h[5m])) * histogram_fraction(0, 0.5, rate(h[5m])) >= 0)`,
		},
		{
			name:  "counts subtract like counters",
			query: `histogram_count(h) - histogram_count(h) * histogram_fraction(0, 0.5, h)`,
			want:  `sum by (model) (histogram_count(rate(h[5m])) - (histogram_count(rate(h[5m])) * histogram_fraction(0, 0.5, rate(h[5m])) >= 0))`,
		},
		{
			name:  "a product of two different histograms is not a count",
			query: `histogram_count(h) * histogram_fraction(0, 0.5, g)`,
			err:   "counters may only be added or subtracted",
		},
		{
			name:  "a histogram function reads a selector, not an expression",
			query: `histogram_count(sum(h))`,
			err:   "reads one native histogram selector",
		},
		{
			name:  "a fraction alone is a ratio, not a count",
			query: `histogram_fraction(0, 0.5, h)`,
			err:   "cannot call histogram_fraction()",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := query.RateBy(tt.query, 5*time.Minute, []string{"model"})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("RateBy = %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}

// TestAClassicOnlyScrapeOfANativeSLIMissesDataAndPagesNobody serves a
// native SLI's histogram as classic series only (a target scraped without
// native histograms): good and total are both absent, so no burn alert can
// fire and SLIDataMissing does; no configuration alert is needed.
func TestAClassicOnlyScrapeOfANativeSLIMissesDataAndPagesNobody(t *testing.T) {
	tiers, err := model.WorkbookTiersOf(model.Severities, 30*24*time.Hour, 2*time.Minute, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Objective: model.NewDecimal(99, 100),
		SLI: model.SLI{Counter: true, Total: &model.Query{Expr: `histogram_count(h)`},
			Good: &model.Query{Expr: `histogram_count(h) * histogram_fraction(0, 0.5, h)`}},
		Window: 30 * 24 * time.Hour, Evaluation: time.Minute, ScrapeInterval: 15 * time.Second,
		Alerting: model.Alerting{Tiers: tiers, NoData: true}}
	_, groups := evaluate(t, slo, `h_count 0+100x90
h_bucket{le="0.5"} 0+1x90
h_bucket{le="+Inf"} 0+100x90`, 80*time.Minute)
	firing := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules() {
			if a, ok := r.(*rules.AlertingRule); ok {
				for _, al := range a.ActiveAlerts() {
					if al.State == rules.StateFiring {
						firing[a.Name()] = true
					}
				}
			}
		}
	}
	if firing[model.AlertBurn] || !firing[model.AlertNoData] {
		t.Errorf("firing %v; want %s and no %s", firing, model.AlertNoData, model.AlertBurn)
	}
}
