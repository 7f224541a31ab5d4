package rules

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
)

// TestRulesEvaluateInThePrometheusRuleEngine runs the generated group of
// each SLI form in Prometheus' own rule engine: every rule must evaluate
// without error and the recorded error ratio must be the count-weighted one.
func TestRulesEvaluateInThePrometheusRuleEngine(t *testing.T) {
	tests := []struct {
		name   string
		sli    model.SLI
		series string
		want   float64 // error ratio over the base window after 30m
	}{
		{
			name: "good and total events give bad = total - good",
			sli:  model.SLI{Counter: true, Total: &model.Query{Expr: `x_count{job="a"}`}, Good: &model.Query{Expr: `x_bucket{job="a",le="0.25"}`}},
			series: `x_count{job="a",pod="1"} 0+100x40
x_count{job="a",pod="2"} 0+300x40
x_bucket{job="a",pod="1",le="0.25"} 0+90x40
x_bucket{job="a",pod="2",le="0.25"} 0+290x40`,
			want: 20.0 / 400,
		},
		{
			name: "bad and total events are weighted by traffic",
			sli:  model.SLI{Counter: true, Total: &model.Query{Expr: `sum(req_total)`}, Bad: &model.Query{Expr: `sum(req_total{code="500"})`}},
			series: `req_total{code="200",pod="1"} 0+99x40
req_total{code="500",pod="1"} 0+1x40
req_total{code="200",pod="2"} 0+0x40
req_total{code="500",pod="2"} 0+4x40`,
			want: 5.0 / 104,
		},
		{
			name: "native histograms count good events under the threshold per series, and an idle series adds no NaN",
			sli: model.SLI{Counter: true, Total: &model.Query{Expr: `histogram_count(h{job="a"})`},
				Good: &model.Query{Expr: `histogram_count(h{job="a"}) * histogram_fraction(0, 0.25, h{job="a"})`}},
			// Schema 0: (0.125, 0.25] holds the good requests, (0.25, 0.5] the slow ones.
			series: `h{job="a",pod="1"} {{schema:0 count:0 sum:0 offset:-2 buckets:[0 0]}}+{{schema:0 count:10 sum:2.5 offset:-2 buckets:[9 1]}}x40
h{job="a",pod="2"} {{schema:0 count:0 sum:0 offset:-2 buckets:[0 0]}}+{{schema:0 count:30 sum:7.5 offset:-2 buckets:[29 1]}}x40
h{job="a",pod="3"} {{schema:0 count:0 sum:0 offset:-2 buckets:[0 0]}}x40`,
			want: 2.0 / 40,
		},
		{
			name:   "a bad series that never appeared counts as zero errors",
			sli:    model.SLI{Counter: true, Total: &model.Query{Expr: `req_total`}, Bad: &model.Query{Expr: `req_total{code="500"}`}},
			series: `req_total{code="200"} 0+50x40`,
			want:   0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tiers, err := model.WorkbookTiersOf(model.Severities, 30*24*time.Hour, 2*time.Minute, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Source: "t.yaml", SLI: tt.sli,
				Objective: model.NewDecimal(99, 100), Window: 30 * 24 * time.Hour, Evaluation: time.Minute,
				ScrapeInterval: 15 * time.Second, Alerting: model.Alerting{Tiers: tiers, NoData: true}}
			got := evalRatio(t, slo, tt.series, 30*time.Minute)
			if !(math.Abs(got-tt.want) <= 1e-9) { // NaN fails too
				t.Errorf("error ratio = %v, want %v", got, tt.want)
			}
		})
	}
}

func evalRatio(t *testing.T, slo model.SLO, series string, until time.Duration) float64 {
	t.Helper()
	ll, _ := evaluate(t, slo, series, until)
	return instant(t, ll, model.Selector(model.ErrorRatio, slo, slo.BaseWindow()), time.Unix(0, 0).UTC().Add(until))
}

// evaluate loads series and evaluates the SLO's rule group every minute
// from time zero until the given time, failing on any rule evaluation error.
func evaluate(t *testing.T, slo model.SLO, series string, until time.Duration) (*promqltest.LazyLoader, map[string]*rules.Group) {
	t.Helper()
	start := time.Unix(0, 0).UTC()
	return evaluateFrom(t, slo, series, start, start.Add(until))
}

func indent(s string) string {
	out := "  "
	for _, c := range s {
		out += string(c)
		if c == '\n' {
			out += "  "
		}
	}
	return out
}

// TestNoTwoRulesOfAFileShareNameAndLabels keeps files clean for promtool's
// duplicate-rules lint, which compares rule names and rule labels only. A
// calendar week or day labels its period as its rolling window would be
// (1w, 1d): the period's recording alone takes the label.
func TestNoTwoRulesOfAFileShareNameAndLabels(t *testing.T) {
	var set model.Set
	day := 24 * time.Hour
	for _, s := range []struct {
		name   string
		window time.Duration
		cal    *model.Calendar
	}{{"a", 28 * day, nil}, {"b", 28 * day, nil}, {"week", 7 * day, &model.Calendar{Unit: "w", Count: 1}}, {"day", day, &model.Calendar{Unit: "d", Count: 1}}} {
		tiers, err := model.WorkbookTiersOf(model.Severities, s.window, 2*time.Minute, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		set.SLOs = append(set.SLOs, model.SLO{Name: s.name, Service: model.Service{Name: "svc"}, Objective: model.NewDecimal(99, 100),
			SLI:    model.SLI{Counter: true, Total: &model.Query{Expr: "t"}, Bad: &model.Query{Expr: "b"}},
			Window: s.window, Calendar: s.cal, Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
			Alerting: model.Alerting{Tiers: tiers, NoData: true}})
	}
	groups, _, err := serviceGroups(set.SLOs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules {
			key := r.Record + r.Alert + fmt.Sprint(r.Labels)
			if seen[key] {
				t.Errorf("two rules %s%s with labels %v", r.Record, r.Alert, r.Labels)
			}
			seen[key] = true
		}
	}
}

// TestTheMinimumTrafficGateSilencesBurnsOnLowTraffic burns half of a 99%
// budget's requests at 0.1 requests/s: the page fires without a gate and
// with a gate below the traffic, and stays silent with a gate above it.
func TestTheMinimumTrafficGateSilencesBurnsOnLowTraffic(t *testing.T) {
	tests := []struct {
		name  string
		gate  string
		fires bool
	}{
		{"no gate pages on a 50x burn", "0", true},
		{"a gate under the traffic still pages", "0.05", true},
		{"a gate over the traffic keeps the page silent", "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tiers, err := model.WorkbookTiersOf(model.Severities, 30*24*time.Hour, 2*time.Minute, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			gate, err := model.ParseDecimal(tt.gate)
			if err != nil {
				t.Fatal(err)
			}
			slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Objective: model.NewDecimal(99, 100),
				SLI:    model.SLI{Counter: true, Total: &model.Query{Expr: "req_total"}, Bad: &model.Query{Expr: `req_total{code="500"}`}},
				Window: 30 * 24 * time.Hour, Evaluation: time.Minute, ScrapeInterval: 15 * time.Second,
				Alerting: model.Alerting{Tiers: tiers, MinEventsPerSecond: gate}}
			_, groups := evaluate(t, slo, `req_total{code="200"} 0+3x90
req_total{code="500"} 0+3x90`, 80*time.Minute)
			fired := false
			for _, g := range groups {
				for _, r := range g.Rules() {
					a, ok := r.(*rules.AlertingRule)
					if !ok {
						continue
					}
					for _, al := range a.ActiveAlerts() {
						if al.State == rules.StateFiring && al.Labels.Get(model.LabelSeverity) == "page" {
							fired = true
						}
					}
				}
			}
			if fired != tt.fires {
				t.Errorf("page fired = %v, want %v", fired, tt.fires)
			}
		})
	}
}

// TestAMissingThresholdBucketRaisesAConfigurationAlertNotABurn serves a
// histogram without the threshold's bucket (as another engine version or
// custom buckets would): the page must stay silent and SLIMisconfigured
// must fire naming the bucket; with the bucket present, neither fires.
func TestAMissingThresholdBucketRaisesAConfigurationAlertNotABurn(t *testing.T) {
	tests := []struct {
		name            string
		series          string
		page, misconfig bool
	}{
		{"the bucket is missing: no page, a configuration ticket",
			`x_count{model="m"} 0+100x90
x_bucket{model="m",le="0.5"} 0+100x90`, false, true},
		{"the bucket exists and every event is slow: the page fires, no ticket",
			`x_count{model="m"} 0+100x90
x_bucket{model="m",le="0.25"} 0+0x90`, true, false},
		{"no events at all: neither fires",
			`other_total 0+1x90`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tiers, err := model.WorkbookTiersOf(model.Severities, 30*24*time.Hour, 2*time.Minute, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Objective: model.NewDecimal(99, 100),
				SLI:    model.SLI{Counter: true, Total: &model.Query{Expr: `x_count{model="m"}`}, Good: &model.Query{Expr: `x_bucket{le="0.25",model="m"}`}},
				Window: 30 * 24 * time.Hour, Evaluation: time.Minute, ScrapeInterval: 15 * time.Second,
				Alerting: model.Alerting{Tiers: tiers}}
			_, groups := evaluate(t, slo, tt.series, 80*time.Minute)
			page, misconfig := false, false
			for _, g := range groups {
				for _, r := range g.Rules() {
					a, ok := r.(*rules.AlertingRule)
					if !ok {
						continue
					}
					for _, al := range a.ActiveAlerts() {
						if al.State != rules.StateFiring {
							continue
						}
						switch {
						case a.Name() == model.AlertBurn && al.Labels.Get(model.LabelSeverity) == "page":
							page = true
						case a.Name() == model.AlertMisconfigured:
							misconfig = true
							if al.Labels.Get("le") != "0.25" || al.Labels.Get(model.LabelSeverity) != "ticket" {
								t.Errorf("SLIMisconfigured labels %v; want le=0.25 and severity=ticket", al.Labels)
							}
						}
					}
				}
			}
			if page != tt.page || misconfig != tt.misconfig {
				t.Errorf("page fired = %v, SLIMisconfigured fired = %v; want %v, %v", page, misconfig, tt.page, tt.misconfig)
			}
		})
	}
}
