package spec_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/template"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

// oddButValid is a spec full of characters that are fine as text but
// special to templates, markdown, HTML or shells: they must come out as
// written, never expanded.
const oddButValid = `apiVersion: openslo/v1
kind: Service
metadata: {name: odd, displayName: "Odd <b>service</b> & 'quotes' \"x\" 100%"}
spec: {description: "Costs $5 a run; see [docs](https://example.com) *now* ` + "`x`" + ` #1"}
---
apiVersion: openslo/v1
kind: SLO
metadata:
  name: odd-availability
  displayName: "Availability % ` + "`printf`" + ` $ {x} <script>"
  annotations:
    inferslo.dev/runbook-url: "https://runbooks.example.com/odd?q=%7B%7B&cost=$5#x"
    inferslo.dev/dashboard-url: "https://grafana.example.com/d/odd?var-x=$5&from=now-6h&q=%7B%7B"
spec:
  service: odd
  description: "Multi-line\ndescription with $5 and %s"
  indicator:
    metadata: {name: odd-sli}
    spec:
      ratioMetric:
        counter: true
        bad: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total{status="5xx",path="/a$"})'}}}
        total: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total{path="/a$"})'}}}
  budgetingMethod: Occurrences
  timeWindow: [{duration: 30d, isRolling: true}]
  objectives: [{displayName: "Up {x}", target: 0.999}]
  alertPolicies:
    - kind: AlertPolicy
      metadata: {name: odd-page}
      spec:
        conditions:
          - kind: AlertCondition
            metadata: {name: odd-fast}
            spec:
              severity: sev_2-critical
              condition: {kind: burnrate, op: gt, threshold: 14.4, lookbackWindow: 1h}
        notificationTargets:
          - kind: AlertNotificationTarget
            metadata: {name: odd-pager}
            spec: {target: pagerduty}
`

// TestNoSpecTextExpandsInAlerts compiles every example and a spec of odd
// characters, then expands every alert label and annotation with
// Prometheus' own template engine, as the rule manager does when an alert
// fires: labels and the runbook and dashboard URLs must come out exactly as
// written, and
// the only query any annotation runs is the generated budget lookup.
func TestNoSpecTextExpandsInAlerts(t *testing.T) {
	sources := []spec.Source{{Name: "odd.yaml", Data: []byte(oddButValid)}}
	examples, _ := filepath.Glob("../examples/*.yaml")
	more, _ := filepath.Glob("../examples/*/*.yaml")
	for _, f := range append(examples, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, spec.Source{Name: f, Data: b})
	}
	res, err := spec.Parse(sources...)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("specs do not load: %v", err)
	}
	out, err := compiler.Compile(res.Set, compiler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	alerts, dashboards := 0, 0
	for _, f := range out.Files {
		if !strings.HasPrefix(f.Path, "prometheus/") || !strings.HasSuffix(f.Path, ".rules.yaml") {
			continue
		}
		groups, errs := rulefmt.Parse(f.Data, false, prommodel.UTF8Validation, parser.NewParser(parser.Options{}), promslog.NewNopLogger())
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f.Path, errs)
		}
		for _, g := range groups.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				alerts++
				budget := model.Selector(model.BudgetRemaining, sloNamed(r.Labels[model.LabelSLO]), 0)
				for k, v := range r.Labels {
					got, queries := expand(t, v, r.Labels)
					if got != v || len(queries) > 0 {
						t.Errorf("%s %s label %s=%q expanded to %q, ran %q", f.Path, r.Alert, k, v, got, queries)
					}
				}
				for k, v := range r.Annotations {
					got, queries := expand(t, v, r.Labels)
					for _, q := range queries {
						if q != budget {
							t.Errorf("%s %s annotation %s ran query %q; only %q is generated", f.Path, r.Alert, k, q, budget)
						}
					}
					if (k == "runbook_url" || k == "dashboard_url") && got != v {
						t.Errorf("%s %s %s %q expanded to %q", f.Path, r.Alert, k, v, got)
					}
					if k == "dashboard_url" {
						dashboards++
					}
				}
			}
		}
	}
	if alerts < 10 {
		t.Fatalf("only %d alerts checked", alerts)
	}
	if dashboards == 0 {
		t.Fatal("no alert carries the spec's dashboard URL")
	}
}

// TestTemplateCheckSeesExpansion shows the check above can fail: text
// holding template code does run a query and change when expanded.
func TestTemplateCheckSeesExpansion(t *testing.T) {
	text := `a {{ with query "up" }}{{ . | first | value }}{{ end }} {{ $externalLabels.cluster }}`
	got, queries := expand(t, text, map[string]string{"slo": "x"})
	if got == text || len(queries) != 1 || queries[0] != "up" {
		t.Fatalf("expanded to %q, queries %q", got, queries)
	}
}

func sloNamed(name string) model.SLO { return model.SLO{Name: name} }

// expand runs text through Prometheus' alert template engine the way the
// rule manager does, recording the queries it runs.
func expand(t *testing.T, text string, lbls map[string]string) (string, []string) {
	t.Helper()
	var queries []string
	query := func(_ context.Context, q string, ts time.Time) (promql.Vector, error) {
		queries = append(queries, q)
		return promql.Vector{{Metric: labels.FromStrings("cluster", "prod"), T: ts.UnixMilli(), F: 0.5}}, nil
	}
	defs := "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"
	data := template.AlertTemplateData(lbls, map[string]string{"cluster": "prod"}, "http://prometheus", promql.Sample{F: 3})
	e := template.NewTemplateExpander(context.Background(), defs+text, "check", data, prommodel.Now(), query, nil, []string{"missingkey=zero"})
	got, err := e.Expand()
	if err != nil {
		t.Fatalf("expand %q: %v", text, err)
	}
	return got, queries
}
