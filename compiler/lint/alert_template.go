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
				if err := r.templateError(part.values[k]); err != nil {
					how := "does not parse"
					if strings.HasPrefix(err.Error(), "at <") {
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
func parseTemplate(text string) error {
	if !strings.Contains(text, "{{") {
		return nil
	}
	data := template.AlertTemplateData(map[string]string{}, map[string]string{}, "", promql.Sample{})
	const name = "__alert"
	noQuery := func(context.Context, string, time.Time) (promql.Vector, error) { return promql.Vector{}, nil }
	exp := template.NewTemplateExpander(context.Background(), templates.PrometheusDefs+text, name, data, 0, noQuery, nil, nil)
	_, err := exp.Expand()
	switch {
	case err == nil:
		return nil
	case strings.HasPrefix(err.Error(), "error parsing template "+name+": "), alwaysFails.MatchString(err.Error()):
		// The position counts the variables Prometheus defines first, so
		// only the message is kept.
		return errors.New(templateNoise.ReplaceAllString(err.Error(), ""))
	}
	return nil
}

var templateNoise = regexp.MustCompile(`error (parsing|executing) template __alert: |template: __alert:\d+(:\d+)?: |executing "__alert" `)

// templateError parses a template once per distinct text in a run: rule
// files repeat the same annotations many times.
func (p *pass) templateError(text string) error {
	if err, ok := p.templates[text]; ok {
		return err
	}
	err := parseTemplate(text)
	p.templates[text] = err
	return err
}

// alwaysFails matches template execution errors that do not depend on the
// alert's labels or value.
var alwaysFails = regexp.MustCompile(`wrong number of args|can't give argument to non-function|can't call method|is not a method|not a defined function|cannot be invoked`)
