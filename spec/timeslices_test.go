package spec

import (
	"fmt"
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
			_, err := checkSliceQuery(tt.query, time.Minute)
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

func TestAThresholdSliceOfSeveralEvaluationsCountsTheirShare(t *testing.T) {
	doc := func(slice, rng, target, annotations string) string {
		return `apiVersion: openslo/v1
kind: SLO
metadata:
  name: ttft
  annotations: {inferslo.dev/scrape-interval: 15s` + annotations + `}
spec:
  service: chat
  budgetingMethod: Timeslices
  timeWindow: [{duration: 28d, isRolling: true}]
  indicator:
    metadata: {name: ttft}
    spec:
      thresholdMetric:
        metricSource:
          type: Prometheus
          spec:
            query: histogram_quantile(0.99, sum by (le) (rate(x_bucket[` + rng + `])))
  objectives: [{op: lte, value: 0.3, target: 0.99, timeSliceTarget: ` + target + `, timeSliceWindow: ` + slice + `}]
`
	}
	tests := []struct {
		name, doc  string
		evaluation time.Duration // the SLI's evaluation interval; 0: refused
		problem    string        // a part of the first problem; empty: none
	}{
		{"0.99 of 1m slices evaluates every scrape and warns that it means all four", doc("1m", "1m", "0.99", ""), 15 * time.Second, "0.99 of 4 evaluations per 1m slice (one every 15s) means all 4"},
		{"0.9 of 5m slices allows two bad evaluations in twenty, without a warning", doc("5m", "2m", "0.9", ""), 15 * time.Second, ""},
		{"the evaluation interval annotation spaces the evaluations", doc("5m", "2m", "0.9", ", inferslo.dev/evaluation-interval: 30s"), 30 * time.Second, ""},
		{"an evaluation interval that does not divide the slice is refused", doc("5m", "2m", "0.9", ", inferslo.dev/evaluation-interval: 45s"), 0, "that divides the slice 5m"},
		{"an evaluation interval between scrapes is refused", doc("5m", "2m", "0.9", ", inferslo.dev/evaluation-interval: 20s"), 0, "a whole number of scrape intervals (15s)"},
		{"a range longer than the slice is warned about: one moment counts in the next slices too", doc("5m", "10m", "0.9", ""), 15 * time.Second, "the range [10m] is longer than the 5m slice"},
		{"a rate over fewer than four scrapes is refused", doc("2m", "30s", "0.9", ""), 0, "the range [30s] of x_bucket holds fewer than four scrapes for rate(); use at least [1m]"},
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
			if tt.evaluation == 0 {
				if len(res.Set.SLOs) != 0 {
					t.Fatal("the SLO compiled")
				}
				return
			}
			if len(res.Set.SLOs) != 1 {
				t.Fatalf("%d SLOs, want 1", len(res.Set.SLOs))
			}
			s := res.Set.SLOs[0]
			if s.Timeslices.Evaluation != tt.evaluation || s.Evaluation != s.Timeslices.Window || s.SLI.Threshold.Quantile != 0.99 {
				t.Errorf("SLI evaluated every %s, group every %s, quantile %g; want every %s, once per slice, 0.99",
					s.Timeslices.Evaluation, s.Evaluation, s.SLI.Threshold.Quantile, tt.evaluation)
			}
		})
	}
}

// TestAGaugeJudgedAtEachEvaluationCompilesAsTheSDKWritesIt: OpenSLO's own
// examples judge a gauge (a consumer lag) per 1m slice with
// timeSliceTarget 0.95, through a DataSource their files do not define. The
// source's type says Prometheus, so the missing DataSource and a missing
// notification target are warnings; a gauge read once per slice
// (timeSliceTarget 1) is still refused, and so is a DataSource missing
// with no type beside it.
func TestAGaugeJudgedAtEachEvaluationCompilesAsTheSDKWritesIt(t *testing.T) {
	doc := func(source, target string) string {
		return `- apiVersion: openslo/v1
  kind: SLO
  metadata:
    name: lag
  spec:
    service: queue
    indicator:
      metadata:
        name: lag
      spec:
        thresholdMetric:
          metricSource:
` + source + `
            spec:
              query: sum(max_over_time(queue_lag{group="billing"}[2m]))
    timeWindow:
      - duration: 1w
        isRolling: false
        calendar:
          startTime: 2024-01-01 00:00:00
          timeZone: UTC
    budgetingMethod: Timeslices
    objectives:
      - displayName: Small
        op: lt
        value: 100
        target: 0.995
        timeSliceTarget: ` + target + `
        timeSliceWindow: 1m
    alertPolicies:
      - kind: AlertPolicy
        metadata:
          name: fast
        spec:
          conditions:
            - kind: AlertCondition
              metadata:
                name: fast-burn
              spec:
                severity: page
                condition: {kind: burnrate, op: gt, threshold: 14.4, lookbackWindow: 1h, alertAfter: 2m}
          notificationTargets:
            - targetRef: on-call
`
	}
	const both, typeOnly, refOnly = "            metricSourceRef: queue-prometheus\n            type: Prometheus", "            type: Prometheus", "            metricSourceRef: queue-prometheus"
	tests := []struct {
		name, doc string
		compiles  bool
		says      []string // parts of the problems, in order
	}{
		{"a reference to an undefined DataSource beside type: Prometheus compiles with a warning", doc(both, "0.95"), true,
			[]string{`warning: [0].spec.indicator.spec.thresholdMetric.metricSource.metricSourceRef: no DataSource named "queue-prometheus" in the specs given; compiled as the Prometheus source its type says`,
				"the range [2m] is longer than the 1m slice", `no AlertNotificationTarget named "on-call" in the specs given; the rules do not need it`, "0.95 of 4 evaluations per 1m slice (one every 15s) means all 4"}},
		{"an inline Prometheus source needs no DataSource", doc(typeOnly, "0.95"), true, nil},
		{"an undefined DataSource with no type beside it is refused", doc(refOnly, "0.95"), false,
			[]string{`[0].spec.indicator.spec.thresholdMetric.metricSource.metricSourceRef: no DataSource named "queue-prometheus" in the specs given, and no type: Prometheus beside it`}},
		{"a gauge read once per slice is refused, naming the target that would take it", doc(typeOnly, "1"), false,
			[]string{"with a timeSliceTarget below 1 any query is evaluated several times per slice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Parse(Source{Name: "s.yaml", Data: []byte(tt.doc)})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Set.SLOs) == 1 && res.Err() == nil; got != tt.compiles {
				t.Fatalf("compiled = %v, want %v; problems: %v", got, tt.compiles, res.Problems)
			}
			all := fmt.Sprint(res.Problems)
			for _, want := range tt.says {
				if !strings.Contains(all, want) {
					t.Errorf("problems %v do not say %q", res.Problems, want)
				}
			}
			if len(tt.says) == 0 && strings.Contains(all, "DataSource") {
				t.Errorf("problems %v name a DataSource", res.Problems)
			}
		})
	}
}
