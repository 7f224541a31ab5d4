package rules

import (
	"fmt"
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/templates"
)

// Validate checks typed rule groups as Prometheus does when it loads them
// (group names, label names and values, PromQL, alert templates), without
// a round trip through YAML: each expression is parsed once, and the
// templates of all alerts are parsed together.
func Validate(groups []rulefmt.RuleGroup) error { return NewValidator().Validate(groups) }

// Validate is the package's Validate, remembering what passed.
func (v *Validator) Validate(groups []rulefmt.RuleGroup) error {
	msgs, alerts := v.validate(groups)
	return problems(append(msgs, v.templateProblems(alerts)...))
}

func problems(msgs []string) error {
	if len(msgs) > 0 {
		return fmt.Errorf("generated rules do not validate: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// validate checks all but the alert templates, and returns the alerts
// whose templates are left to check.
func (v *Validator) validate(groups []rulefmt.RuleGroup) ([]string, []rulefmt.Rule) {
	var msgs []string
	seen := make(map[string]bool, len(groups))
	var alerts []rulefmt.Rule
	for _, g := range groups {
		if g.Name == "" {
			msgs = append(msgs, "a group name is empty")
		}
		if seen[g.Name] {
			msgs = append(msgs, fmt.Sprintf("rule group %q appears twice", g.Name))
		}
		seen[g.Name] = true
		for _, m := range labelProblems(g.Labels, nil) {
			msgs = append(msgs, "group "+g.Name+": "+m)
		}
		for i, r := range g.Rules {
			where := func() string { return fmt.Sprintf("group %s, rule %d (%s)", g.Name, i+1, r.Record+r.Alert) }
			expr, ok := v.exprs.Shape(r.Expr)
			key := ruleShape{record: r.Record, alert: r.Alert, expr: expr, dur: r.For, keep: r.KeepFiringFor}
			if !ok || !v.rules[key] {
				// Rule.Validate parses a template per label and
				// annotation; those are parsed together below.
				bare := r
				bare.Labels, bare.Annotations = nil, nil
				errs := bare.Validate(rulefmt.RuleNode{}, prommodel.UTF8Validation, v.exprs)
				for _, err := range errs {
					msgs = append(msgs, fmt.Sprintf("%s: %v", where(), err.Unwrap()))
				}
				v.rules[key] = ok && len(errs) == 0
			}
			if r.Record != "" && len(r.Annotations) > 0 {
				msgs = append(msgs, where()+": a recording rule has annotations")
			}
			for _, m := range labelProblems(r.Labels, r.Annotations) {
				msgs = append(msgs, where()+": "+m)
			}
			if r.Alert != "" {
				alerts = append(alerts, r)
			}
		}
	}
	return msgs, alerts
}

func labelProblems(labels, annotations map[string]string) []string {
	var out []string
	for k, v := range labels {
		if !prommodel.UTF8Validation.IsValidLabelName(k) || k == prommodel.MetricNameLabel {
			out = append(out, "invalid label name: "+k)
		}
		if !prommodel.LabelValue(v).IsValid() {
			out = append(out, "invalid label value: "+v)
		}
	}
	for k := range annotations {
		if !prommodel.UTF8Validation.IsValidLabelName(k) {
			out = append(out, "invalid annotation name: "+k)
		}
	}
	return out
}

// templateProblems parses the label and annotation templates of alerts as
// Prometheus does. Setting up a template costs far more than parsing one,
// so all of them are parsed as blocks of one template; only when that fails
// is each parsed alone, to name the broken one.
func (v *Validator) templateProblems(alerts []rulefmt.Rule) []string {
	var all strings.Builder
	var texts []string
	seen := map[string]bool{}
	for _, r := range alerts {
		for _, m := range []map[string]string{r.Labels, r.Annotations} {
			for _, text := range m {
				// Text without an action is plain text to the template
				// lexer, and a text parses the same wherever it appears.
				if !strings.Contains(text, "{{") || v.texts[text] || seen[text] {
					continue
				}
				seen[text] = true
				fmt.Fprintf(&all, "{{define \"t%d\"}}%s%s{{end}}", len(texts), templates.PrometheusDefs, text)
				texts = append(texts, text)
			}
		}
	}
	if len(texts) == 0 || templates.ParsePrometheus(all.String()) == nil {
		for _, text := range texts {
			v.texts[text] = true
		}
		return nil
	}
	var out []string
	for _, r := range alerts {
		one := rulefmt.Rule{Alert: r.Alert, Expr: "1", Labels: r.Labels, Annotations: r.Annotations}
		for _, err := range one.Validate(rulefmt.RuleNode{}, prommodel.UTF8Validation, query.NewParser()) {
			out = append(out, fmt.Sprintf("alert %s: %v", r.Alert, err.Unwrap()))
		}
	}
	if len(out) == 0 {
		out = append(out, "alert templates do not parse together")
	}
	return out
}

// Check validates a rule file as `promtool check rules` does.
func Check(content []byte) error {
	_, errs := rulefmt.Parse(content, false, prommodel.UTF8Validation, query.NewParser(), promslog.NewNopLogger())
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("generated rules do not validate: %s", strings.Join(msgs, "; "))
	}
	return nil
}
