package rules

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"gopkg.in/yaml.v3"
)

func yamlV3(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hostile are strings a spec author could put into a label, a runbook URL
// or a description, each of which a YAML writer must quote or fold.
var hostile = []string{
	"", " ", "a", "y", "No", "on", "OFF", "true", "Null", "~", "0.99", "0.999", "14.4", "-0.5", "007", "1.", ".5", "1.2.3", "--1", "1e3", "0x1f", ".inf", "-1", "+1",
	"12:30", "1m", "4m40s", "2d19h12m", "a: b", "a:b", "a:", "a #b", "a#b", "#a", "- a", "-a", "? a",
	"[a]", "{a}", "a, b", "'a'", `"a"`, "a'b", `a"b`, "&a", "*a", "!a", "|a", ">a", "%a", "@a", "`a`",
	"a\nb", "a\n", "\na", "a\n\nb", "  a\n b", "max(\n  x\n)\n", "a\nb\n", "(a \n b)", "a\n\n", "a\n  b\n", "a\tb", "a ", " a", "---", "...", "é", "a\x00b", "a\u2028b",
	"https://runbooks.example.com/llm/chat?x=1#y", `sum(rate(x{a="b"}[5m])) or on () (0 * y{z="w"})`,
	"(a)", "(", "<<", "=", "a\r\nb",
	"1 - x", "0.5 * x", "1 - x: y", "1 - x #y", "1 -", "1 - ", "1 -  x", "1. - x", "1 -x", "12 / a{b=\"c\"}", "1 - x ", "2001-12-14 21:59:43", "1_000 - x", "1:20 - x",
}

// oddKeys are label and annotation names Prometheus accepts that a YAML
// writer must quote or order with care.
var oddKeys = []string{"Tier2", "y", "Null", "on", "a.b", "a-b", "le_10", "le_9", "Ä", "9lives", "a b", "a: b"}

// TestRuleFilesAreTheBytesYAMLv3Writes holds the reflection-free encoder to
// yaml.v3: for the label values, expressions and annotations of generated
// rules and for strings chosen to need quoting, both write the same bytes.
func TestRuleFilesAreTheBytesYAMLv3Writes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var oneLine []string
	for _, s := range hostile {
		if !strings.ContainsAny(s, "\n\r\u2028") {
			oneLine = append(oneLine, s)
		}
	}
	breaks, from := false, hostile
	pick := func() string {
		s := from[r.IntN(len(from))]
		if r.IntN(3) == 0 {
			s += from[r.IntN(len(from))]
		}
		// Literal blocks of plain lines must match too.
		breaks = breaks || strings.ContainsAny(s, "\r\u2028") || strings.Contains(s, "\n") && !literal(s)
		return s
	}
	offset := prommodel.Duration(30_000_000_000)
	for i := range 400 {
		// Every other case sticks to one-line text, compared byte for byte.
		breaks, from = false, hostile
		if i%2 == 0 {
			from = oneLine
		}
		g := rulefmt.RuleGroup{Name: pick(), Interval: prommodel.Duration(60_000_000_000)}
		if i%5 == 0 {
			g.QueryOffset = &offset
			g.Limit = 10
			g.Labels = map[string]string{"team": pick(), "Tier2": pick(), oddKeys[i%len(oddKeys)]: pick()}
		}
		for range 3 {
			g.Rules = append(g.Rules,
				rulefmt.Rule{Record: pick(), Expr: pick(), Labels: map[string]string{"slo": pick(), "window": pick(), "le_2": pick(), "l" + oddKeys[i%len(oddKeys)]: pick()}},
				rulefmt.Rule{Alert: pick(), Expr: pick(), For: offset, KeepFiringFor: offset,
					Labels:      map[string]string{"severity": pick()},
					Annotations: map[string]string{"summary": pick(), "description": pick(), "runbook_url": pick()}},
			)
		}
		groups := []rulefmt.RuleGroup{g, {Name: "empty", Rules: []rulefmt.Rule{}}}
		want := yamlV3(t, rulefmt.RuleGroups{Groups: groups})
		got := AppendGroups(nil, 0, groups, GroupStyle{})
		// Text with line breaks may take another style than yaml.v3's (see
		// appendQuoted), so it must only read back the same.
		if !bytes.Equal(got, want) && !breaks {
			t.Fatalf("case %d differs\nyaml.v3:\n%s\nAppendGroups:\n%s", i, want, got)
		}
		var back rulefmt.RuleGroups
		if err := yaml.Unmarshal(got, &back); err != nil {
			t.Fatalf("case %d does not read back: %v\n%s", i, err, got)
		}
		for j := range groups {
			if a, b := back.Groups[j], groups[j]; !reflect.DeepEqual(a, b) {
				for k := range b.Rules {
					if !reflect.DeepEqual(a.Rules[k], b.Rules[k]) {
						t.Fatalf("case %d: rule\n%#v\nreads back as\n%#v\nfrom\n%s", i, b.Rules[k], a.Rules[k], got)
					}
				}
				t.Fatalf("case %d: group\n%#v\nreads back as\n%#v\nfrom\n%s", i, b, a, got)
			}
		}
	}
}

// TestIndentedGroupsReadBackTheSame checks the nested forms (PrometheusRule
// spec, Thanos field) by reading them back.
func TestIndentedGroupsReadBackTheSame(t *testing.T) {
	g := rulefmt.RuleGroup{Name: "g", Labels: map[string]string{"a": "b"}, Rules: []rulefmt.Rule{
		{Alert: "A", Expr: "max(\n  x\n)\n", Annotations: map[string]string{"d": "a: 'b'\n\n c"}},
	}}
	b := []byte("spec:\n")
	b = AppendGroups(b, 2, []rulefmt.RuleGroup{g}, GroupStyle{LabelsBeforeRules: true, PartialResponseStrategy: "warn"})
	var back struct {
		Spec struct {
			Groups []struct {
				Name     string            `yaml:"name"`
				Labels   map[string]string `yaml:"labels"`
				Strategy string            `yaml:"partial_response_strategy"`
				Rules    []rulefmt.Rule    `yaml:"rules"`
			} `yaml:"groups"`
		} `yaml:"spec"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&back); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	got := back.Spec.Groups[0]
	if got.Name != "g" || got.Labels["a"] != "b" || got.Strategy != "warn" || got.Rules[0].Expr != g.Rules[0].Expr || got.Rules[0].Annotations["d"] != g.Rules[0].Annotations["d"] {
		t.Errorf("read back %+v from\n%s", got, b)
	}
}

// TestEncodedReusesTheRuleFileOnlyWhereTheBytesAgree holds
// Service.AppendEncoded, which indents the rule file's encoding instead of
// writing the groups again, to AppendGroups for every indent and style,
// after what the file already holds.
func TestEncodedReusesTheRuleFileOnlyWhereTheBytesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pick := func() string { return hostile[r.IntN(len(hostile))] }
	styles := []GroupStyle{{}, {LabelsBeforeRules: true}, {PartialResponseStrategy: "warn"}, {LabelsBeforeRules: true, PartialResponseStrategy: "abort"}}
	for i := range 100 {
		g := rulefmt.RuleGroup{Name: pick(), Rules: []rulefmt.Rule{
			{Record: pick(), Expr: pick(), Labels: map[string]string{"slo": pick()}},
			{Alert: pick(), Expr: pick(), Annotations: map[string]string{"summary": pick(), "description": pick()}},
		}}
		if i%2 == 0 {
			g.Labels = map[string]string{"team": pick()}
		}
		groups := []rulefmt.RuleGroup{g}
		s := Service{Groups: groups, body: AppendGroups(nil, 0, groups, GroupStyle{})}
		for _, indent := range []int{0, 2, 4} {
			for _, style := range styles {
				head := []byte("# header\n")
				want := AppendGroups(append([]byte(nil), head...), indent, groups, style)
				if got := s.AppendEncoded(head, indent, style); !bytes.Equal(got, want) {
					t.Fatalf("case %d, indent %d, style %+v:\nAppendEncoded:\n%s\nAppendGroups:\n%s", i, indent, style, got, want)
				}
			}
		}
	}
}
