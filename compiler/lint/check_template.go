package lint

import (
	"context"
	"maps"
	"slices"
	"strings"

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
					r.atYAML(rule.File, rule.key(part.key, k), "%s %s: template does not parse: %s", part.key, k, err)
				}
			}
		}
	},
}

// parseTemplate parses an alert template the way Prometheus does when it
// loads rules, with the variables it defines.
func parseTemplate(alert, text string) error {
	if !strings.Contains(text, "{{") {
		return nil
	}
	data := template.AlertTemplateData(map[string]string{}, map[string]string{}, "", promql.Sample{})
	err := template.NewTemplateExpander(context.Background(), templates.PrometheusDefs+text, "__alert_"+alert, data, 0, nil, nil, nil).ParseTest()
	if err != nil {
		return err
	}
	return nil
}
