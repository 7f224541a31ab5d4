package spec_test

import (
	"strings"
	"testing"

	"github.com/inferslo/inferslo/spec"
)

// TestOpenSLOIsReadAsTheSDKReadsIt loads OpenSLO written as the spec and
// the SDK write it, older versions included, and checks what each resolves
// to and which problems it reports.
func TestOpenSLOIsReadAsTheSDKReadsIt(t *testing.T) {
	tests := []struct {
		name, doc string
		// check inspects the loaded result; problems lists parts of the
		// expected problems' texts, in order.
		check    func(t *testing.T, res spec.Result)
		problems []string
	}{
		{
			name: "an unquoted calendar startTime stays the string the SDK validates",
			doc: `apiVersion: openslo/v1
kind: SLO
metadata: {name: api}
spec:
  service: api
  budgetingMethod: Occurrences
  timeWindow:
    - duration: 1M
      isRolling: false
      calendar:
        startTime: 2022-01-01 00:00:00
        timeZone: UTC
  indicator:
    metadata: {name: api-ok}
    spec:
      ratioMetric:
        counter: true
        good: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total{code!~"5.."})'}}}
        total: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total)'}}}
  objectives: [{target: 0.99}]
`,
			check: func(t *testing.T, res spec.Result) {
				if len(res.Set.SLOs) != 1 || res.Set.SLOs[0].Calendar == nil {
					t.Fatalf("want one calendar SLO, got %+v", res.Set.SLOs)
				}
			},
		},
		{
			name: "keys of a metric source inferslo does not read are kept and warned about",
			doc: `apiVersion: openslo/v1
kind: SLO
metadata: {name: api}
spec:
  service: api
  budgetingMethod: Occurrences
  timeWindow: [{duration: 28d, isRolling: true}]
  indicator:
    metadata: {name: api-ok}
    spec:
      ratioMetric:
        counter: true
        good: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total{code!~"5.."})', dimensions: [code]}}}
        total: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total)'}}}
  objectives: [{target: 0.99}]
`,
			problems: []string{`spec.indicator.spec.ratioMetric.good.metricSource.spec.dimensions: kept but not used`},
		},
		{
			name: "Sloth's openslo/v1alpha SLO converts to v1 with {{.window}} rates in the counter form",
			doc: `apiVersion: openslo/v1alpha
kind: SLO
metadata: {name: api-availability, displayName: Requests}
spec:
  service: api
  budgetingMethod: Occurrences
  objectives:
    - ratioMetrics:
        good: {source: prometheus, queryType: promql, query: 'sum(rate(http_requests_total{job="api",code!~"5.."}[{{.window}}]))'}
        total: {source: prometheus, queryType: promql, query: 'sum(rate(http_requests_total{job="api"}[{{.window}}]))'}
      target: 0.999
  timeWindows: [{count: 30, unit: Day}]
`,
			check: func(t *testing.T, res spec.Result) {
				if len(res.Set.SLOs) != 1 {
					t.Fatalf("want one SLO, got %d", len(res.Set.SLOs))
				}
				s := res.Set.SLOs[0]
				if !s.SLI.Counter || s.SLI.Good.Expr != `sum(http_requests_total{code!~"5..",job="api"})` || s.Window.Hours() != 720 || s.Objective.String() != "0.999" {
					t.Errorf("converted SLO = counter %v, good %q, window %s, objective %s", s.SLI.Counter, s.SLI.Good.Expr, s.Window, s.Objective)
				}
			},
			problems: []string{"apiVersion: openslo/v1alpha SLO converted to openslo/v1 (SLO api-availability)"},
		},
		{
			name: "a v1alpha SLO with several objectives becomes one SLO per objective, named as Sloth names them",
			doc: `apiVersion: openslo/v1alpha
kind: SLO
metadata: {name: api}
spec:
  service: api
  budgetingMethod: Occurrences
  objectives:
    - ratioMetrics:
        good: {source: prometheus, queryType: promql, query: 'sum(rate(a_ok[{{.window}}]))'}
        total: {source: prometheus, queryType: promql, query: 'sum(rate(a_all[{{.window}}]))'}
      target: 0.99
    - ratioMetrics:
        good: {source: prometheus, queryType: promql, query: 'sum(rate(b_ok[{{.window}}]))'}
        total: {source: prometheus, queryType: promql, query: 'sum(rate(b_all[{{.window}}]))'}
      target: 0.95
  timeWindows: [{count: 28, unit: Day}]
`,
			check: func(t *testing.T, res spec.Result) {
				var names []string
				for _, s := range res.Set.SLOs {
					names = append(names, s.Name)
				}
				if strings.Join(names, " ") != "api-0 api-1" {
					t.Errorf("SLOs = %v, want api-0 api-1", names)
				}
			},
			problems: []string{"(SLO api-0, api-1)"},
		},
		{
			name: "a template variable other than the window is refused where it stands",
			doc: `apiVersion: openslo/v1alpha
kind: SLO
metadata: {name: api}
spec:
  service: api
  budgetingMethod: Occurrences
  objectives:
    - ratioMetrics:
        good: {source: prometheus, queryType: promql, query: 'sum(rate(a_ok{job="{{.service}}"}[{{.window}}]))'}
        total: {source: prometheus, queryType: promql, query: 'sum(rate(a_all[{{.window}}]))'}
      target: 0.99
  timeWindows: [{count: 28, unit: Day}]
`,
			problems: []string{"spec.objectives[0].ratioMetrics.good.query: the template variable {{.service}} has no counterpart"},
		},
		{
			name: "openslo.com/v2alpha SLO and SLI convert to v1",
			doc: `apiVersion: openslo.com/v2alpha
kind: SLI
metadata: {name: api-ok}
spec:
  ratioMetric:
    counter: true
    good: {dataSourceSpec: {type: Prometheus, connectionDetails: {}}, spec: {query: 'sum(http_requests_total{code!~"5.."})'}}
    total: {dataSourceSpec: {type: Prometheus, connectionDetails: {}}, spec: {query: 'sum(http_requests_total)'}}
---
apiVersion: openslo.com/v2alpha
kind: SLO
metadata: {name: api}
spec:
  serviceRef: api
  sliRef: api-ok
  budgetingMethod: Occurrences
  timeWindow: [{duration: 28d, isRolling: true}]
  objectives: [{target: 0.995}]
`,
			check: func(t *testing.T, res spec.Result) {
				if len(res.Set.SLOs) != 1 || res.Set.SLOs[0].Service.Name != "api" || res.Set.SLOs[0].SLI.Total.Expr != "sum(http_requests_total)" {
					t.Fatalf("want the converted SLO of service api, got %+v", res.Set.SLOs)
				}
			},
			problems: []string{"openslo.com/v2alpha SLI converted", "openslo.com/v2alpha SLO converted"},
		},
		{
			name: "a Sloth service file is pointed at inferslo import",
			doc: `version: "prometheus/v1"
service: api
slos:
  - name: requests
    objective: 99.9
    sli: {events: {error_query: 'sum(rate(e[{{.window}}]))', total_query: 'sum(rate(t[{{.window}}]))'}}
`,
			problems: []string{"version: this is a Sloth service spec (version: prometheus/v1), not OpenSLO; convert it with `inferslo import spec.yaml`"},
		},
		{
			name: "a Pyrra SLO is pointed at inferslo import",
			doc: `apiVersion: pyrra.dev/v1alpha1
kind: ServiceLevelObjective
metadata: {name: api}
spec: {target: "99", window: 4w}
`,
			problems: []string{"apiVersion: this is a Pyrra ServiceLevelObjective (pyrra.dev/v1alpha1), not OpenSLO; convert it with `inferslo import spec.yaml`"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := spec.Parse(spec.Source{Name: "spec.yaml", Data: []byte(tt.doc)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Problems) != len(tt.problems) {
				t.Fatalf("problems = %v, want %d", res.Problems, len(tt.problems))
			}
			for i, want := range tt.problems {
				if !strings.Contains(res.Problems[i].String(), want) || res.Problems[i].Line == 0 {
					t.Errorf("problem %d = %s, want one located and saying %q", i, res.Problems[i], want)
				}
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}

func TestRateFormReplacesOnlyRatesOverTheWindow(t *testing.T) {
	tests := []struct {
		name, query, want, problem string
		rated                      bool
	}{
		{"a sum of rates over the window becomes a sum of counters", `sum(rate(x{a="b"}[{{.window}}]))`, `sum(x{a="b"})`, "", true},
		{"rates in a ratio convert on both sides", `sum(rate(x[{{.window}}])) - sum(rate(y[{{.window}}]))`, `sum(x) - sum(y)`, "", true},
		{"a query without the template stays as it is", `sum(rate(x[5m]))`, `sum(rate(x[5m]))`, "", false},
		{"increase over the window has no counter form", `sum(increase(x[{{.window}}]))`, "", "increase(…[{{.window}}]) has no exact counter form", false},
		{"the window outside rate is refused", `max_over_time(x[{{.window}}])`, "", "no exact counter form", false},
		{"another template variable is refused", `sum(rate(x{s="{{.Service}}"}[{{.window}}]))`, "", "{{.Service}}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rated, err := spec.RateForm(tt.query)
			switch {
			case tt.problem != "":
				if err == nil || !strings.Contains(err.Error(), tt.problem) {
					t.Fatalf("error = %v, want one saying %q", err, tt.problem)
				}
			case err != nil:
				t.Fatal(err)
			case got != tt.want || rated != tt.rated:
				t.Errorf("RateForm = %q, %v; want %q, %v", got, rated, tt.want, tt.rated)
			}
		})
	}
}
