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

func TestTimeSlicesOnCalendarWindowsAndShortSlices(t *testing.T) {
	doc := func(window, slice, annotations string) string {
		return `apiVersion: openslo/v1
kind: SLO
metadata:
  name: ttft` + annotations + `
spec:
  service: chat
  budgetingMethod: Timeslices
  timeWindow: [` + window + `]
  indicator:
    metadata: {name: ttft}
    spec:
      thresholdMetric:
        metricSource:
          type: Prometheus
          spec:
            query: histogram_quantile(0.99, sum by (le) (rate(x_bucket[` + slice + `])))
  objectives: [{op: lte, value: 0.3, target: 0.99, timeSliceTarget: 1, timeSliceWindow: ` + slice + `}]
`
	}
	const month = "{duration: 1M, isRolling: false, calendar: {startTime: 2024-01-01 00:00:00, timeZone: UTC}}"
	tests := []struct {
		name, doc string
		scrape    time.Duration // the scrape interval the SLO assumes; 0: refused
		problem   string        // a part of the first problem; empty: none
	}{
		{"1m slices on a calendar month compile, assuming a 15s scrape", doc(month, "1m", ""), 15 * time.Second, "the rules assume Prometheus scrapes every 15s"},
		{"a stated scrape interval is kept and not warned about", doc("{duration: 28d, isRolling: true}", "1m", "\n  annotations: {inferslo.dev/scrape-interval: 10s}"), 10 * time.Second, ""},
		{"a calendar slice that does not divide 15 minutes is refused", doc(month, "4m", ""), 0, "does not divide 15 minutes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Parse(Source{Name: "s.yaml", Data: []byte(tt.doc)})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.problem == "" && len(res.Problems) > 0:
				t.Fatalf("problems: %v", res.Problems)
			case tt.problem != "" && (len(res.Problems) == 0 || !strings.Contains(res.Problems[0].Message, tt.problem)):
				t.Fatalf("problems = %v, want one saying %q", res.Problems, tt.problem)
			}
			if tt.scrape == 0 {
				if len(res.Set.SLOs) != 0 {
					t.Fatal("the SLO compiled")
				}
				return
			}
			if len(res.Set.SLOs) != 1 || res.Set.SLOs[0].ScrapeInterval != tt.scrape {
				t.Fatalf("SLOs = %+v, want one assuming a %s scrape", res.Set.SLOs, tt.scrape)
			}
		})
	}
}
