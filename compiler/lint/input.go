package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/spec"
)

// Kinds of input, recognised by content.
const (
	KindRules        = "rules"          // Prometheus, Thanos or Mimir rule file
	KindRuleObject   = "prometheusrule" // PrometheusRule object
	KindDashboard    = "dashboard"      // Grafana dashboard JSON
	KindScaledObject = "scaledobject"   // KEDA ScaledObject
	KindSpec         = "spec"           // inferslo or OpenSLO spec
)

// File is one parsed input.
type File struct {
	Name  string
	Kind  string
	lines []string
	// disabled maps a line to the check ids disabled on it.
	disabled map[int][]string
	queries  []*Query
	rules    []*Rule
}

func (f *File) line(n int) string {
	if n < 1 || n > len(f.lines) {
		return ""
	}
	return f.lines[n-1]
}

// Query is one PromQL expression found in a file.
type Query struct {
	File *File
	// Text is what was parsed; Grafana variables are replaced by values
	// that parse (Vars is then true).
	Text string
	Vars bool
	Expr parser.Expr
	node *yaml.Node
	// orig maps an offset of Text to an offset of the scalar's value.
	orig func(int) int
	// Rule is the rule holding the query, nil outside rule files.
	Rule *Rule
}

// Pos returns the file line and column of an offset into the query.
func (q *Query) Pos(off int) (line, col int) {
	if q.orig != nil {
		off = q.orig(off)
	}
	return scalarPos(q.File.lines, q.node, off)
}

// Rule is a recording or alerting rule.
type Rule struct {
	File          *File
	Record, Alert string
	Query         *Query
	For           time.Duration
	Labels        map[string]string
	Annotations   map[string]string
	node          *yaml.Node
	first, last   int // lines the rule spans
}

// key returns the node of a property of the rule (for, labels.severity
// ...), or the nearest node that exists.
func (r *Rule) key(path ...string) *yaml.Node {
	n := r.node
	for _, k := range path {
		v := mapValue(n, k)
		if v == nil {
			return n
		}
		n = v
	}
	return n
}

func readFile(p *pass, s Source) *File {
	text := strings.ReplaceAll(string(s.Data), "\r\n", "\n")
	f := &File{Name: s.Name, lines: strings.Split(text, "\n")}
	f.disabled = disables(f.lines)
	dec := yaml.NewDecoder(bytes.NewReader(s.Data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			p.with(checkSyntax).at(f, yamlErrorLine(err), 0, "not valid YAML or JSON: %s", strings.TrimPrefix(err.Error(), "yaml: "))
			return f
		}
		root := &n
		if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
			root = root.Content[0]
		}
		docs = append(docs, root)
	}
	for _, root := range docs {
		if root.Kind == yaml.SequenceNode {
			for _, item := range root.Content {
				f.object(p, item)
			}
			continue
		}
		f.object(p, root)
	}
	return f
}

// object recognises one document by its content.
func (f *File) object(p *pass, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return
	}
	apiVersion, kind := scalarAt(n, "apiVersion"), scalarAt(n, "kind")
	switch {
	case strings.HasPrefix(apiVersion, "openslo/") || apiVersion == spec.ShorthandAPIVersion:
		f.Kind = KindSpec
	case kind == "PrometheusRule":
		f.Kind = KindRuleObject
		f.groups(p, mapValue(mapValue(n, "spec"), "groups"))
	case kind == "ScaledObject":
		f.Kind = KindScaledObject
		for _, t := range items(mapValue(mapValue(n, "spec"), "triggers")) {
			if scalarAt(t, "type") != "prometheus" {
				continue
			}
			if q := mapValue(mapValue(t, "metadata"), "query"); q != nil {
				f.query(p, q, nil, false)
			}
		}
	case mapValue(n, "groups") != nil:
		f.Kind = KindRules
		f.groups(p, mapValue(n, "groups"))
	case mapValue(n, "panels") != nil || mapValue(mapValue(n, "dashboard"), "panels") != nil:
		f.Kind = KindDashboard
		f.targets(p, n)
	}
}

// validateRule reports what Prometheus' own rule validation
// (model/rulefmt) refuses in a rule: record and alert both set or both
// missing, a bad rule name, for or annotations on a recording rule. The
// expression and the templates are left to promql/syntax and
// alert/template, which locate their errors precisely.
func (f *File) validateRule(p *pass, r *Rule) {
	rr := rulefmt.Rule{Record: r.Record, Alert: r.Alert, Expr: "0", For: model.Duration(r.For)}
	if r.Alert == "" {
		rr.Labels, rr.Annotations = r.Labels, r.Annotations // no templates on recording rules
	} else {
		for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
			if !model.UTF8Validation.IsValidLabelName(k) {
				p.with(checkRuleFormat).atYAML(f, r.key("labels"), "invalid label name: %s", k)
			}
		}
	}
	for _, we := range rr.Validate(rulefmt.RuleNode{}, model.UTF8Validation, parser.NewParser(parser.Options{})) {
		p.with(checkRuleFormat).atYAML(f, r.node, "%v", we.Unwrap())
	}
}

// groups reads rule groups.
func (f *File) groups(p *pass, groups *yaml.Node) {
	names := map[string]bool{}
	for _, g := range items(groups) {
		name := mapValue(g, "name")
		switch {
		case name == nil || name.Value == "":
			p.with(checkRuleFormat).atYAML(f, g, "a rule group needs a name")
		case names[name.Value]:
			p.with(checkRuleFormat).atYAML(f, name, "group name %q is repeated in the same file", name.Value)
		default:
			names[name.Value] = true
		}
		for _, rn := range items(mapValue(g, "rules")) {
			r := &Rule{File: f, node: rn, Record: scalarAt(rn, "record"), Alert: scalarAt(rn, "alert"),
				Labels: stringMap(mapValue(rn, "labels")), Annotations: stringMap(mapValue(rn, "annotations"))}
			r.first, r.last = rn.Line, lastLine(rn)
			if fn := mapValue(rn, "for"); fn != nil {
				d, err := model.ParseDuration(fn.Value)
				if err != nil {
					p.with(checkSyntax).at(f, fn.Line, fn.Column, "for: %v", err)
				}
				r.For = time.Duration(d)
			}
			if e := mapValue(rn, "expr"); e != nil {
				r.Query = f.query(p, e, r, false)
			} else {
				p.with(checkSyntax).at(f, rn.Line, rn.Column, "rule has no expr")
			}
			f.validateRule(p, r)
			f.rules = append(f.rules, r)
		}
	}
}

// targets finds every target expr of a dashboard, in rows and nested
// panels alike.
func (f *File) targets(p *pass, n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if k == "targets" {
				for _, t := range items(v) {
					if e := mapValue(t, "expr"); e != nil && e.Kind == yaml.ScalarNode && strings.TrimSpace(e.Value) != "" {
						f.query(p, e, nil, true)
					}
				}
				continue
			}
			f.targets(p, v)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			f.targets(p, c)
		}
	}
}

// query parses one expression and reports a syntax error at its place.
func (f *File) query(p *pass, n *yaml.Node, r *Rule, grafana bool) *Query {
	q := &Query{File: f, node: n, Text: n.Value, Rule: r}
	if grafana {
		q.Text, q.orig, q.Vars = substituteVariables(n.Value)
	}
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(q.Text)
	if err != nil {
		off := 0
		msg := err.Error()
		var perrs parser.ParseErrors
		if errors.As(err, &perrs) && len(perrs) > 0 {
			off = int(perrs[0].PositionRange.Start)
			msg = perrs[0].Err.Error()
		}
		line, col := q.Pos(off)
		p.with(checkSyntax).at(f, line, col, "PromQL does not parse: %s", msg)
	} else {
		q.Expr = expr
	}
	f.queries = append(f.queries, q)
	return q
}

// specs validates the spec files of the set together, since specs refer
// to each other across files.
func (p *pass) specs(sources []Source) {
	var in []spec.Source
	byName := map[string]*File{}
	for i, f := range p.files {
		if f.Kind == KindSpec {
			in = append(in, spec.Source{Name: sources[i].Name, Data: sources[i].Data})
			byName[f.Name] = f
		}
	}
	if len(in) == 0 {
		return
	}
	res, err := spec.Parse(in...)
	if err != nil {
		f := byName[in[0].Name]
		p.with(checkSpec).at(f, 0, 0, "%v", err)
		return
	}
	for _, pr := range res.Problems {
		f := byName[pr.File]
		if f == nil {
			continue
		}
		c := checkSpec
		if pr.Severity == spec.Warning {
			c = checkSpecWarning
		}
		msg := pr.Message
		if pr.Path != "" {
			msg = pr.Path + ": " + msg
		}
		p.with(c).at(f, pr.Line, pr.Column, "%s", msg)
	}
}

func yamlErrorLine(err error) int {
	var line int
	if _, e := fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line); e == nil {
		return line
	}
	return 0
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalarAt(n *yaml.Node, key string) string {
	if v := mapValue(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func items(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func stringMap(n *yaml.Node) map[string]string {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = n.Content[i+1].Value
	}
	return out
}

// lastLine is the last line a node's content starts on.
func lastLine(n *yaml.Node) int {
	last := n.Line
	for _, c := range n.Content {
		if l := lastLine(c); l > last {
			last = l
		}
	}
	if n.Kind == yaml.ScalarNode && (n.Style&(yaml.LiteralStyle|yaml.FoldedStyle)) != 0 {
		last += strings.Count(strings.TrimRight(n.Value, "\n"), "\n") + 1
	}
	return last
}
