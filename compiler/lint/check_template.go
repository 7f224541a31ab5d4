package lint

import (
	"context"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/template"

	"github.com/inferslo/inferslo/templates"
)

// Prometheus refuses the whole rule file when one template does not parse.
var checkTemplate = Check{
	ID: "alert/template", Severity: Error,
	Summary: "An alert's label or annotation template does not parse.",
	Rule: func(r *reporter, rule *Rule) {
		if rule.Alert == "" {
			return
		}
		for _, part := range []struct {
			key    string
			values map[string]string
		}{{"labels", rule.Labels}, {"annotations", rule.Annotations}} {
			for _, k := range slices.Sorted(maps.Keys(part.values)) {
				if err := parseTemplate(rule.Alert, part.values[k]); err != nil {
					how := "does not parse"
					if strings.Contains(err.Error(), "executing") {
						how = "fails on every evaluation"
					}
					r.atYAML(rule.File, rule.key(part.key, k), "%s %s: template %s: %s", part.key, k, how, err)
				}
			}
		}
	},
}

// parseTemplate parses an alert template the way Prometheus does when it
// loads rules, with the variables it defines, then runs it once on a
// sample alert: calls with the wrong number of arguments ({{value}}) or
// piped into a non-function ({{ $labels.a | $labels.b }}) parse, but fail
// on every evaluation.
func parseTemplate(alert, text string) error {
	if !strings.Contains(text, "{{") {
		return nil
	}
	data := template.AlertTemplateData(map[string]string{}, map[string]string{}, "", promql.Sample{})
	name := "__alert_" + alert
	err := template.NewTemplateExpander(context.Background(), templates.PrometheusDefs+text, name, data, 0, nil, nil, nil).ParseTest()
	if err != nil {
		return err
	}
	noQuery := func(context.Context, string, time.Time) (promql.Vector, error) { return promql.Vector{}, nil }
	exp := template.NewTemplateExpander(context.Background(), templates.PrometheusDefs+text, name, data, 0, noQuery, nil, nil)
	if _, err := exp.Expand(); err != nil && alwaysFails.MatchString(err.Error()) {
		return errors.New(strings.TrimPrefix(err.Error(), "error executing template "+name+": "))
	}
	return nil
}

// alwaysFails matches template execution errors that do not depend on the
// alert's labels or value.
var alwaysFails = regexp.MustCompile(`wrong number of args|can't give argument to non-function|can't call method|is not a method|not a defined function|cannot be invoked`)
