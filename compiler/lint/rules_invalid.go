package lint

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	ruleyaml "go.yaml.in/yaml/v3"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/ruler"
)

var checkRuleFormat = Check{
	ID: "rules/invalid", Severity: Error,
	Summary: "Prometheus refuses the rule file, as `promtool check rules` does: an unknown or repeated key, a value of the wrong type, a bad duration, a repeated group name, or a rule model/rulefmt refuses (record and alert both set, invalid names, for or keep_firing_for on a recording rule).",
}

var checkOtherRuler = Check{
	ID: "rules/other-ruler", Severity: Error,
	Summary: "A rule file uses a key another ruler adds to Prometheus' format (Thanos' partial_response_strategy, Mimir's and Cortex's source_tenants, mimirtool's namespace): Prometheus refuses it; set `ruler:` in .inferslo.yaml (or --ruler) when the file is for that ruler.",
}

// yamlKeys lists the keys a rulefmt type reads, so the known keys follow
// the Prometheus version inferslo is built with.
func yamlKeys(v any) map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}

// rulerOf is the ruler the config names, Prometheus by default.
func (p *pass) rulerOf() string {
	if p.opts.Config != nil && p.opts.Config.Ruler != "" {
		return p.opts.Config.Ruler
	}
	return "prometheus"
}

// strictKeys reports keys of a mapping Prometheus does not read (it loads
// rule files with unknown fields refused) and keys written twice. object
// may be a PrometheusRule's, whose schema holds the Thanos key too.
func (f *File) strictKeys(p *pass, n *yaml.Node, place string, known map[string]bool, object bool) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	seen := map[string]int{}
	target := p.rulerOf()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Value == "<<" {
			continue
		}
		// Repeated keys of groups and rules are found decoding them.
		if line, ok := seen[k.Value]; ok && place == "file" {
			p.with(checkRuleFormat).atYAML(f, k, "%s key %q is already set at line %d: Prometheus refuses repeated keys", place, k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		if known[k.Value] {
			continue
		}
		var others []string
		for _, r := range ruler.Targets() {
			if r.Reads(place, k.Value) {
				others = append(others, r.Name)
			}
		}
		switch {
		case k.Value == "partial_response_strategy" && (target == "thanos" || object):
			if v := n.Content[i+1]; v.Value != "warn" && v.Value != "abort" {
				p.with(checkRuleFormat).atYAML(f, v, "partial_response_strategy %q is not warn or abort, the values Thanos reads", v.Value)
			}
		case slices.Contains(others, target):
		case len(others) > 0:
			p.with(checkOtherRuler).atYAML(f, k, "%s key %q is read by %s, not Prometheus, which refuses the file; set ruler: %s in .inferslo.yaml if the file is for that ruler", place, k.Value, strings.Join(others, " and "), others[0])
		default:
			msg := fmt.Sprintf("unknown %s key %q: Prometheus refuses the file; the keys are %s", place, k.Value, quoteList(slices.Sorted(maps.Keys(known)), len(known)))
			if near := closest(k.Value, slices.Sorted(maps.Keys(known))); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			p.with(checkRuleFormat).atYAML(f, k, "%s", msg)
		}
	}
}

// groups reads rule groups, refusing what Prometheus' loader refuses.
func (f *File) groups(p *pass, groups *yaml.Node, object bool) {
	if groups != nil && groups.Kind != yaml.SequenceNode && !(groups.Kind == yaml.ScalarNode && groups.Tag == "!!null") {
		p.with(checkRuleFormat).atYAML(f, groups, "groups must be a list of rule groups")
		return
	}
	names := map[string]bool{}
	groupKeys, ruleKeys := yamlKeys(rulefmt.RuleGroup{}), yamlKeys(rulefmt.Rule{})
	for _, g := range items(groups) {
		if g.Kind != yaml.MappingNode {
			p.with(checkRuleFormat).atYAML(f, g, "a rule group must be a mapping with name and rules")
			continue
		}
		f.strictKeys(p, g, "group", groupKeys, object)
		broken := f.decodeStrict(p, g, &rulefmt.RuleGroup{})
		name := mapValue(g, "name")
		switch {
		case name == nil || name.Value == "":
			p.with(checkRuleFormat).atYAML(f, g, "a rule group needs a name")
		case names[name.Value]:
			// At the repeat, even when it is an alias of the first name.
			p.with(checkRuleFormat).atYAML(f, rawValue(g, "name"), "group name %q is repeated in the same file", name.Value)
		default:
			names[name.Value] = true
		}
		for _, k := range slices.Sorted(maps.Keys(stringMap(mapValue(g, "labels")))) {
			if !model.UTF8Validation.IsValidLabelName(k) || k == model.MetricNameLabel {
				p.with(checkRuleFormat).atYAML(f, mapValue(g, "labels"), "invalid group label name: %s", k)
			}
		}
		f.ruleList(p, mapValue(g, "rules"), ruleKeys, object, broken)
	}
}

// ruleList reads the rules of a group, or a bare list of rules (the form
// Helm charts and jsonnet libraries template into groups).
// broken lists the lines where the rules did not decode.
func (f *File) ruleList(p *pass, list *yaml.Node, keys map[string]bool, object bool, broken []int) {
	for _, rn := range items(list) {
		if rn.Kind != yaml.MappingNode {
			p.with(checkRuleFormat).atYAML(f, rn, "a rule must be a mapping with record or alert, and expr")
			continue
		}
		f.strictKeys(p, rn, "rule", keys, object)
		r := &Rule{File: f, node: rn, Record: scalarAt(rn, "record"), Alert: scalarAt(rn, "alert"),
			Labels: stringMap(mapValue(rn, "labels")), Annotations: stringMap(mapValue(rn, "annotations"))}
		r.first, r.last = rn.Line, lastLine(rn)
		if fn := mapValue(rn, "for"); fn != nil {
			if d, err := model.ParseDuration(fn.Value); err == nil {
				r.For = time.Duration(d)
			}
		}
		if e := mapValue(rn, "expr"); e != nil {
			r.Query = f.query(p, e, r, false)
		}
		if !slices.ContainsFunc(broken, func(l int) bool { return l == 0 || l >= r.first && l <= r.last }) {
			f.validateRule(p, r)
		}
		f.rules = append(f.rules, r)
	}
}

// decodeStrict decodes a node into a rulefmt type as Prometheus does and
// reports each error at its line: values of the wrong type, repeated keys
// in nested mappings, durations that do not parse (their error carries no
// line, so the value is found). It returns the lines of the errors (0 when
// unknown).
func (f *File) decodeStrict(p *pass, n *yaml.Node, into any) []int {
	err := n.Decode(into)
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var lines []int
		for _, e := range te.Errors {
			line, msg := 0, e
			if m := yamlLine.FindStringSubmatch(e); m != nil {
				line, _ = strconv.Atoi(m[1])
				msg = m[2]
			}
			p.with(checkRuleFormat).at(f, line, 0, "%s", msg)
			lines = append(lines, line)
		}
		return lines
	}
	if bad := badDuration(n); bad != nil {
		_, perr := model.ParseDuration(bad.Value)
		p.with(checkRuleFormat).atYAML(f, bad, "%v", perr)
		return []int{bad.Line}
	}
	p.with(checkRuleFormat).atYAML(f, n, "%v", err)
	return []int{0}
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// durationKeys are the keys rulefmt reads as model.Duration.
var durationKeys = []string{"interval", "query_offset", "for", "keep_firing_for"}

// badDuration finds the first duration value under a node that
// model.ParseDuration refuses.
func badDuration(n *yaml.Node) *yaml.Node {
	n = deref(n)
	if n == nil {
		return nil
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			v := deref(n.Content[i+1])
			if slices.Contains(durationKeys, n.Content[i].Value) && v != nil && v.Kind == yaml.ScalarNode {
				if _, err := model.ParseDuration(v.Value); err != nil {
					return v
				}
			}
		}
	}
	for _, c := range n.Content {
		if b := badDuration(c); b != nil {
			return b
		}
	}
	return nil
}

// validateRule reports what Prometheus' own rule validation
// (model/rulefmt) refuses in a rule: record and alert both set or both
// missing, no expr, a bad rule name, for, keep_firing_for or annotations
// on a recording rule. The expression and the templates are left to
// promql/syntax and alert/template, which locate their errors precisely.
func (f *File) validateRule(p *pass, r *Rule) {
	rr := rulefmt.Rule{Record: r.Record, Alert: r.Alert, For: model.Duration(r.For), Labels: r.Labels, Annotations: r.Annotations}
	if e := mapValue(r.node, "expr"); e != nil && e.Value != "" {
		rr.Expr = "0" // parsed, and its errors located, by promql/syntax
	}
	if k := mapValue(r.node, "keep_firing_for"); k != nil {
		d, _ := model.ParseDuration(k.Value)
		rr.KeepFiringFor = d
	}
	// rulefmt places its errors at these nodes (of its own YAML module).
	var rn rulefmt.RuleNode
	for key, at := range map[string]*ruleyaml.Node{"record": &rn.Record, "alert": &rn.Alert, "expr": &rn.Expr} {
		n := r.key(key)
		at.Line, at.Column = n.Line, n.Column
	}
	if r.Alert != "" {
		// rulefmt would parse every template of an alert, which
		// alert/template does once per text: the names are checked here.
		rr.Labels, rr.Annotations = nil, nil
		for part, m := range map[string]map[string]string{"label": r.Labels, "annotation": r.Annotations} {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if !model.UTF8Validation.IsValidLabelName(k) || part == "label" && k == model.MetricNameLabel {
					p.with(checkRuleFormat).atYAML(f, r.key(part+"s", k), "invalid %s name: %s", part, k)
				}
			}
		}
	}
	for _, we := range rr.Validate(rn, model.UTF8Validation, query.NewParser()) {
		at := r.node
		if m := nodePrefix.FindStringSubmatch(we.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			if line > 0 {
				at = &yaml.Node{Line: line, Column: col}
			}
		}
		msg := we.Unwrap().Error()
		for _, part := range []string{"label", "annotation"} {
			if name, ok := strings.CutPrefix(msg, "invalid "+part+" name: "); ok {
				at = r.key(part+"s", name)
			}
		}
		p.with(checkRuleFormat).atYAML(f, at, "%s", msg)
	}
}

// nodePrefix is the position rulefmt's WrappedError prints first.
var nodePrefix = regexp.MustCompile(`^(\d+):(\d+): `)

// rawValue is a key's value node as written, an alias not followed.
func rawValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return n
}
