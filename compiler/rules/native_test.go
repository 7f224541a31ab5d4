package rules

import (
	"strings"
	"testing"
	"time"
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
			got, err := RateBy(tt.query, 5*time.Minute, []string{"model"})
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
