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
				if !strings.Contains(text, "{{") {
					continue
				}
				// Texts with the same actions parse alike: each SLO's
				// wording differs only between them.
				text = templateActions(text)
				if v.texts[text] || seen[text] {
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

// templateActions is text's template actions ({{…}}) alone, in order, with
// raw strings emptied: whether a template parses depends on its actions,
// not on the text between them nor on what a raw string holds (an SLO's
// query). Quoted strings inside an action may hold "}}". A text the scan
// cannot split surely (a comment, an unclosed action or string) is returned
// whole.
func templateActions(text string) string {
	if strings.Contains(text, "/*") {
		return text
	}
	var out strings.Builder
	rest := text
	for {
		start := strings.Index(rest, "{{")
		if start < 0 {
			return out.String()
		}
		out.WriteString("{{")
		end, ok := appendAction(&out, rest[start+2:])
		if !ok {
			return text
		}
		rest = rest[start+2+end:]
	}
}

// appendAction writes an action's inside up to and including its closing
// "}}", raw strings emptied, and returns the length it read; quoted strings
// and characters are skipped whole.
func appendAction(out *strings.Builder, s string) (int, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '}':
			if i+1 < len(s) && s[i+1] == '}' {
				out.WriteString("}}")
				return i + 2, true
			}
			out.WriteByte(c)
		case '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				return 0, false
			}
			out.WriteString("``")
			i += j + 1
		case '"', '\'':
			from := i
			i++
			for ; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				return 0, false
			}
			out.WriteString(s[from : i+1])
		default:
			out.WriteByte(c)
		}
	}
	return 0, false
}
