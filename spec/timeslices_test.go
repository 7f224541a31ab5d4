package spec

import (
	"strings"
	"testing"
	"time"
)

func TestASliceQueryReadsExactlyOneSlice(t *testing.T) {
	tests := []struct {
		name, query string
		problem     string // a part of the refusal; empty: accepted
	}{
		{"a percentile of bucket rates over the slice is accepted", `histogram_quantile(0.99, sum by (le) (rate(x_bucket{job="a"}[1m])))`, ""},
		{"increase over the slice is accepted too", `histogram_quantile(0.5, sum by (le) (increase(x_bucket[1m])))`, ""},
		{"a range longer than the slice reads more than the slice", `histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m])))`, "differs from timeSliceWindow 1m"},
		{"an @ modifier pins another time", `histogram_quantile(0.99, sum by (le) (rate(x_bucket[1m] @ 100)))`, "carries @ or offset"},
		{"a subquery reads other times", `histogram_quantile(0.99, sum by (le) (max_over_time(rate(x_bucket[1m])[1h:1m])))`, "subquery"},
		{"a selector without a range is no rate over the slice", `histogram_quantile(0.99, sum by (le) (x_bucket))`, "without a range"},
		{"a range outside rate is refused", `histogram_quantile(0.99, sum by (le) (max_over_time(x_bucket[1m])))`, "not read by rate()"},
		{"a quantile of 1 is not a percentile", `histogram_quantile(1, sum by (le) (rate(x_bucket[1m])))`, "between 0 and 1"},
		{"a query that is not a percentile is refused", `sum(rate(x_bucket[1m]))`, "percentile of a histogram"},
		{"broken PromQL is refused", `histogram_quantile(0.99,`, "invalid PromQL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkSliceQuery(tt.query, time.Minute)
			switch {
			case tt.problem == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.problem != "" && (err == nil || !strings.Contains(err.Error(), tt.problem)):
				t.Errorf("error = %v, want one saying %q", err, tt.problem)
			}
		})
	}
}
