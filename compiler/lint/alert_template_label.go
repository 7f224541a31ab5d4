package lint

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// labelRef finds a label an alert template reads: $labels.x, .Labels.x or
// index $labels "x". Inside range or with, dot is something else (a query
// result), so .Labels is read only in templates without them.
var (
	labelRef    = regexp.MustCompile(`\$labels\.([A-Za-z_]\w*)|index\s+\$labels\s+"([^"]+)"`)
	dotLabelRef = regexp.MustCompile(`(?:\$labels|\.Labels)\.([A-Za-z_]\w*)|index\s+(?:\$labels|\.Labels)\s+"([^"]+)"`)
	rebindsDot  = regexp.MustCompile(`\{\{-?\s*(range|with)\b`)
	// templateAction is one {{ ... }} action.
	templateAction = regexp.MustCompile(`\{\{[^}]*\}\}`)
)

// guarded finds a label a template reads in an action that handles its
// absence: if, with, or a fallback with or/and ({{ or $labels.pod $labels.instance }}),
// by field or by index ({{ if index $labels "model_name" }}).
var guarded = regexp.MustCompile(`\{\{-?[^}]*\b(?:if|with|or|and)\s[^}]*?(?:(?:\$labels|\.Labels)\.[A-Za-z_]\w*|index\s+(?:\$labels|\.Labels)\s+")`)

// A template that reads a label the query's result cannot carry renders
// empty: the page says "instance " and nobody knows where to look.
var checkTemplateLabel = Check{
	ID: "alert/template-label", Severity: Error,
	Summary: "An alert's annotation or label template reads a label the query's result cannot carry (an aggregation, absent(), vector() or on/ignoring dropped it).",
	Rule: func(r *reporter, rule *Rule) {
		if rule.Alert == "" || rule.Query == nil || rule.Query.Expr == nil {
			return
		}
		var flow *resultLabels
		for _, part := range []struct {
			key    string
			values map[string]string
		}{{"labels", rule.Labels}, {"annotations", rule.Annotations}} {
			for _, k := range slices.Sorted(maps.Keys(part.values)) {
				text := part.values[k]
				if !strings.Contains(text, "{{") {
					continue
				}
				safe := map[string]bool{}
				for _, action := range templateAction.FindAllString(text, -1) {
					if guarded.MatchString(action) {
						for _, m := range dotLabelRef.FindAllStringSubmatch(action, -1) {
							safe[m[1]+m[2]] = true
						}
					}
				}
				seen := map[string]bool{}
				refs := dotLabelRef
				if rebindsDot.MatchString(text) {
					refs = labelRef
				}
				for _, m := range refs.FindAllStringSubmatch(text, -1) {
					name := m[1] + m[2]
					if safe[name] || seen[name] {
						continue
					}
					seen[name] = true
					if flow == nil {
						f := labelFlow(rule.Query.Expr)
						flow = &f
					}
					if ok, by := flow.carries(name); !ok {
						r.atYAML(rule.File, rule.key(part.key, k), "%s %s reads $labels.%s, but the query's result has no %s label: %s drops it, so the %s renders empty",
							part.key, k, name, name, describe(rule.Query, by), strings.TrimSuffix(part.key, "s"))
					}
				}
			}
		}
	},
}
