package rules

import (
	"testing"

	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/templates"
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

// TestATemplateParsesAsItsActionsAlone holds the template check's key, a
// text's actions without the words between them, to Prometheus' own parse
// of the whole text: both parse, or neither does.
func TestATemplateParsesAsItsActionsAlone(t *testing.T) {
	for _, c := range []struct {
		name, text string
	}{
		{"words around actions", `SLO chat-ttft burns {{ printf "%.1f" $value }}x on {{ $labels.slo }}.`},
		{"a string holding closing braces", `a {{ "}}" }} b {{ $labels.x }}`},
		{"a raw string holding closing braces", "a {{ `}} {{` }} b"},
		{"a query in a raw string", "left: {{ with printf `x{slo=\"a\"}` | query }}{{ . | first | value }}{{ end }}"},
		{"a character constant of a brace", `a {{ printf "%c" '}' }} b`},
		{"an escaped quote in a string", `a {{ "\"}}" }} b`},
		{"trim markers", "a \n {{- $labels.x -}} \n b"},
		{"a comment holding closing braces", "a {{/* }} */}} b"},
		{"words only", "no action here }}"},
		{"an unclosed action", "a {{ $labels.x b"},
		{"an unclosed string", `a {{ "x }} b`},
		{"an undefined variable", "a {{ $nope }} b"},
		{"an unclosed block", "a {{ if true }} b"},
		{"an end without a block", "a {{ end }} b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			whole := templates.ParsePrometheus(templates.PrometheusDefs+c.text) == nil
			actions := templates.ParsePrometheus(templates.PrometheusDefs+templateActions(c.text)) == nil
			if whole != actions {
				t.Errorf("the whole text parses: %v; its actions %q: %v", whole, templateActions(c.text), actions)
			}
		})
	}
	a, b := templateActions("SLO a burns {{ $value }} for {{ $labels.m }} {{ printf `x{slo=\"a\"}` }}"),
		templateActions("SLO bb is slow {{ $value }}, {{ $labels.m }}! {{ printf `x{slo=\"bb\"}` }}")
	if a != b {
		t.Errorf("texts with the same actions have keys %q and %q", a, b)
	}
}
