package rules

import (
	"testing"

	"github.com/prometheus/prometheus/model/rulefmt"
)

// TestValidateRefusesWhatPrometheusRefuses breaks one thing per case in a
// group Prometheus loads, and expects both the typed check and a parse of
// the encoded file to refuse it, also from a Validator that has passed the
// unbroken group (its caches must not hide a break).
func TestValidateRefusesWhatPrometheusRefuses(t *testing.T) {
	good := func() []rulefmt.RuleGroup {
		return []rulefmt.RuleGroup{{Name: "g", Rules: []rulefmt.Rule{
			{Record: "a:b", Expr: `sum(x{a=~"b|c"})`, Labels: map[string]string{"slo": "s"}},
			{Alert: "A", Expr: "a:b > 1", Labels: map[string]string{"severity": "page"},
				Annotations: map[string]string{"summary": `{{ printf "%.1f" $value }} on {{ $labels.slo }}`}},
		}}}
	}
	tests := []struct {
		name   string
		break_ func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup
	}{
		{"an expression that does not parse", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup { g[0].Rules[0].Expr = "sum(x"; return g }},
		{"a regular expression that does not compile", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup {
			g[0].Rules[0].Expr = `sum(x{a=~"(b"})`
			return g
		}},
		{"an annotation template that does not parse", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup {
			g[0].Rules[1].Annotations["summary"] = "{{ .Broken"
			return g
		}},
		{"a template using an undefined variable", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup {
			g[0].Rules[1].Annotations["summary"] = "{{ $nope }}"
			return g
		}},
		{"a template closing another's block", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup {
			g[0].Rules[1].Labels["severity"] = "{{ if true }}"
			g[0].Rules[1].Annotations["summary"] = "{{ end }}"
			return g
		}},
		{"two groups with one name", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup { return append(g, g[0]) }},
		{"a recording rule with a for", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup { g[0].Rules[0].For = 60_000_000_000; return g }},
		{"a recording rule with annotations", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup {
			g[0].Rules[0].Annotations = map[string]string{"a": "b"}
			return g
		}},
		{"a recording name with braces", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup { g[0].Rules[0].Record = "a{b}"; return g }},
		{"a rule that is neither", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup { g[0].Rules[0].Record = ""; return g }},
		{"the metric name as a label", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup {
			g[0].Rules[0].Labels["__name__"] = "x"
			return g
		}},
		{"an invalid UTF-8 label value", func(g []rulefmt.RuleGroup) []rulefmt.RuleGroup {
			g[0].Rules[1].Labels["severity"] = "\xff"
			return g
		}},
	}
	if err := Validate(good()); err != nil {
		t.Fatalf("the unbroken group is refused: %v", err)
	}
	if err := Check(AppendGroups(nil, 0, good(), GroupStyle{})); err != nil {
		t.Fatalf("Prometheus refuses the unbroken group: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups := tt.break_(good())
			if err := Check(AppendGroups(nil, 0, groups, GroupStyle{})); err == nil {
				t.Fatal("Prometheus accepts the broken group; the case proves nothing")
			}
			err := Validate(groups)
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			t.Log(err)
			v := NewValidator()
			if err := v.Validate(good()); err != nil {
				t.Fatal(err)
			}
			if err := v.Validate(tt.break_(good())); err == nil {
				t.Fatal("a Validator that had passed the unbroken group accepted it")
			}
		})
	}
}
