package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/engine"
	"github.com/inferslo/inferslo/spec/querybound"
)

// Kinds of input, recognised by content.
const (
	KindRules        = "rules"          // Prometheus, Thanos or Mimir rule file
	KindRuleObject   = "prometheusrule" // PrometheusRule object
	KindDashboard    = "dashboard"      // Grafana dashboard JSON
	KindScaledObject = "scaledobject"   // KEDA ScaledObject
	KindSpec         = "spec"           // inferslo or OpenSLO spec
	KindConfigMap    = "configmap"      // ConfigMap holding rule files
	KindCatalog      = "catalog"        // inferslo's catalog/slos.json
	KindRuleTest     = "ruletest"       // promtool test rules file
	KindAlertmanager = "alertmanager"   // Alertmanager configuration (inhibit rules): nothing to lint
	// KindGeneratorSpec is a Sloth, Pyrra or OpenSLO v1alpha spec, which
	// other generators read: recognised, not linted.
	KindGeneratorSpec = "generator-spec"
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
	// Skipped says why a file was not linted; its lines are never shown.
	Skipped string
	// ruleAt maps a line to the rule spanning it, built when a finding
	// needs it.
	ruleAt []*Rule
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
	disabled      []string
	// burn caches the rule's burn conditions once computed.
	burn *[]burnCondition
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
	if helmTemplate.MatchString(text) {
		f.Skipped = "a Helm template (it reads .Values, .Release ...): lint what it renders"
		return f
	}
	dec := yaml.NewDecoder(bytes.NewReader(s.Data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			switch {
			case goTemplate.MatchString(text):
				f.Skipped = "a template (a line starts with {{, {% or {#): lint what it renders"
			case jsonComment.MatchString(text):
				f.Skipped = "JSON with comments, which Prometheus and Grafana do not read"
			case linted.MatchString(text):
				// Alert templates ({{ $labels.x }}) never turn this off: a
				// rule file with a YAML slip is one Prometheus refuses.
				p.with(checkSyntax).at(f, yamlErrorLine(err), 0, "not valid YAML or JSON: %s", strings.TrimPrefix(err.Error(), "yaml: "))
			default:
				f.Skipped = "not YAML or JSON lint recognises"
			}
			return f
		}
		root := &n
		if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
			root = root.Content[0]
		}
		docs = append(docs, root)
	}
	for i, root := range docs {
		switch {
		case isRuleList(root):
			f.Kind = KindRules
			f.ruleList(p, root, yamlKeys(rulefmt.Rule{}), false, f.decodeStrict(p, root, &[]rulefmt.Rule{}))
		case root.Kind == yaml.SequenceNode:
			for _, item := range root.Content {
				f.object(p, item)
			}
		default:
			f.object(p, root)
		}
		if i > 0 && f.Kind == KindRules && mapValue(root, "groups") != nil {
			p.with(checkMultiDocument).atYAML(f, root, "Prometheus loads only the first YAML document of a rule file: the groups of this document (%d of %d) are never evaluated; move them into the first document or a file of their own", i+1, len(docs))
		}
	}
	if f.Kind == "" && f.Skipped == "" {
		f.Skipped = "no rule groups, PrometheusRule, dashboard, ScaledObject or spec in it"
	}
	return f
}

// isRuleList says whether a document is a bare list of rules, the form
// Helm charts and jsonnet libraries keep rules in before templating them
// into groups.
func isRuleList(n *yaml.Node) bool {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return false
	}
	for _, item := range n.Content {
		if mapValue(item, "expr") == nil || mapValue(item, "alert") == nil && mapValue(item, "record") == nil {
			return false
		}
	}
	return true
}

// linted is what a file lint reads starts with somewhere: a key at the
// start of a line (YAML) or a quoted key (JSON).
var linted = regexp.MustCompile(`(?m)^(groups:|- (alert|record):|kind:\s*(PrometheusRule|ScaledObject)\b|apiVersion:\s*(openslo/|inferslo))|"panels"\s*:`)

// helmTemplate finds what only a Helm (or other Go) template reads; an
// alert template has .Labels and .Value, never these.
var helmTemplate = regexp.MustCompile(`\{\{[^}]*(\.Values\b|\.Release\b|\.Chart\b|\.Capabilities\b|\.Files\b|\binclude\s+"|\btoYaml\b|\btpl\s)`)

// goTemplate finds a line that starts with a template action (Go's {{,
// Jinja's {% and {#), which no YAML value does outside a block scalar: in
// a file that is not YAML, it is a template to render first.
var goTemplate = regexp.MustCompile(`(?m)^\s*\{[{%#]`)

// jsonComment finds a // or /* comment starting a line (JSON with comments).
var jsonComment = regexp.MustCompile(`(?m)^\s*(//|/\*)`)

// object recognises one document by its content.
func (f *File) object(p *pass, n *yaml.Node) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	apiVersion, kind := scalarAt(n, "apiVersion"), scalarAt(n, "kind")
	switch {
	case apiVersion == "openslo/v1alpha":
		f.generatorSpec(p, n, "OpenSLO v1alpha (Sloth's OpenSLO format)", "Sloth")
	case strings.HasPrefix(apiVersion, "sloth.slok.dev/") || scalarAt(n, "version") == "prometheus/v1" && mapValue(n, "slos") != nil:
		f.generatorSpec(p, n, "a Sloth spec", "Sloth")
	case strings.HasPrefix(apiVersion, "pyrra.dev/"):
		f.generatorSpec(p, n, "a Pyrra ServiceLevelObjective", "Pyrra")
	case strings.HasPrefix(apiVersion, "openslo/") || apiVersion == spec.ShorthandAPIVersion:
		f.Kind = KindSpec
	case kind == "PrometheusRule":
		if logQLRules(mapValue(mapValue(n, "spec"), "groups")) {
			f.Skipped = lokiRules
			return
		}
		f.Kind = KindRuleObject
		f.groups(p, mapValue(mapValue(n, "spec"), "groups"), true)
	case kind == "ConfigMap":
		f.configMap(p, n)
	case kind == "ScaledObject":
		f.Kind = KindScaledObject
		f.scaledObject(p, n)
	case mapValue(n, "groups") != nil:
		if logQLRules(mapValue(n, "groups")) {
			f.Skipped = lokiRules
			return
		}
		f.Kind = KindRules
		f.strictKeys(p, n, "file", map[string]bool{"groups": true}, false)
		f.groups(p, mapValue(n, "groups"), false)
	case mapValue(n, "tests") != nil && (mapValue(n, "rule_files") != nil || mapValue(n, "evaluation_interval") != nil):
		f.Kind = KindRuleTest
		f.ruleTestQueries(p, mapValue(n, "tests"))
	case mapValue(n, "inhibit_rules") != nil || mapValue(n, "route") != nil && mapValue(n, "receivers") != nil:
		f.Kind = KindAlertmanager // an Alertmanager configuration holds no PromQL
	case mapValue(n, "slos") != nil && mapValue(n, "version") == nil:
		f.Kind = KindCatalog
		f.catalogQueries(p, mapValue(n, "slos"))
	case mapValue(n, "panels") != nil || mapValue(n, "rows") != nil || mapValue(mapValue(n, "dashboard"), "panels") != nil:
		f.Kind = KindDashboard
		if d := mapValue(n, "dashboard"); d != nil && mapValue(n, "panels") == nil {
			n = d
		}
		f.targets(p, newDashboard(n), n, dsInherit)
	}
}

// generatorSpec notes a spec another SLO generator reads: lint says so
// once per file and leaves it alone.
func (f *File) generatorSpec(p *pass, n *yaml.Node, what, generator string) {
	if f.Kind == KindGeneratorSpec {
		return
	}
	f.Kind = KindGeneratorSpec
	p.with(checkGeneratorSpec).atYAML(f, n, "%s is not linted: %s writes rules from it, lint those", what, generator)
}

// query parses one expression and reports a syntax error at its place.
// In a dashboard (grafana) the Grafana variables are substituted first; a
// query that parses only with a variable standing for something else than
// lint can guess is warned about, not refused.
func (f *File) query(p *pass, n *yaml.Node, r *Rule, grafana bool) *Query {
	q := &Query{File: f, node: n, Text: n.Value, Rule: r}
	var subs []substitution
	if grafana {
		q.Text, q.orig, subs = substituteVariables(n.Value, false)
		q.Vars = len(subs) > 0
	}
	// Prometheus' parser takes time quadratic in nesting: a query past
	// the bounds specs are held to is reported and left unparsed.
	if err := querybound.Check(q.Text); err != nil {
		line, col := q.Pos(0)
		p.with(checkTooLarge).at(f, line, col, "not linted: %s", err)
		f.queries = append(f.queries, q)
		return q
	}
	expr, err := query.NewParser().ParseExpr(q.Text)
	if err != nil && q.Vars {
		if text, orig, _ := substituteVariables(n.Value, true); text != q.Text {
			if e, err2 := query.NewParser().ParseExpr(text); err2 == nil {
				q.Text, q.orig, expr, err = text, orig, e, nil
			}
		}
	}
	if err != nil {
		off := 0
		msg := err.Error()
		var perrs parser.ParseErrors
		if errors.As(err, &perrs) && len(perrs) > 0 {
			off = int(perrs[0].PositionRange.Start)
			msg = perrs[0].Err.Error()
		}
		line, col := q.Pos(off)
		c := checkSyntax
		if v, ok := nearVariable(subs, q.orig, off); ok {
			c = checkVariablePosition
			msg = "$" + v + " stands where lint cannot tell what it expands to, and the query does not parse with a guess: " + msg
		} else if fn := unknownFunction.FindStringSubmatch(msg); fn != nil && metricsQLFunctions[fn[1]] {
			c = checkNotPromQL
			msg = fn[1] + " is a MetricsQL (VictoriaMetrics) function, not PromQL: " + msg
		}
		p.with(c).at(f, line, col, "PromQL does not parse: %s", msg)
	} else {
		q.Expr = expr
	}
	f.queries = append(f.queries, q)
	return q
}

// nearVariable says whether a parse error at off (in the substituted
// text) is at or just after a substituted variable.
func nearVariable(subs []substitution, orig func(int) int, off int) (string, bool) {
	if orig == nil {
		return "", false
	}
	in := orig(off)
	for _, s := range subs {
		if s.role != roleText && in >= s.start-1 && in <= s.end+2 {
			return s.name, true
		}
	}
	return "", false
}

var unknownFunction = regexp.MustCompile(`unknown function with name "(\w+)"`)

// specs validates the spec files of the set together, since specs refer
// to each other across files.
//
// The buckets the specs declare for their engines' histograms (a custom
// engine, changed buckets) are buckets lint accepts for those metrics, so
// the output compiled from the specs lints clean beside them.
func (p *pass) specs(cat *engine.Catalog, sources []Source) {
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
	res, err := spec.ParseWith(cat, in...)
	if err != nil {
		f := byName[in[0].Name]
		p.with(checkSpec).at(f, 0, 0, "%v", err)
		return
	}
	for _, slo := range res.Set.SLOs {
		if inf := slo.Inference; inf != nil {
			for metric, b := range inf.Signals.Buckets {
				p.catalog.declare(metric, b)
			}
			if inf.Histogram != "" {
				p.catalog.declare(inf.Histogram, inf.Buckets)
			}
		}
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

// deref follows an alias to its anchored node, as rulefmt's decoding does.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// mapValue returns a key's value in a mapping, through aliases and merge
// keys (<<: *anchor) as YAML decoding resolves them.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	return mapValueDepth(n, key, 0)
}

func mapValueDepth(n *yaml.Node, key string, depth int) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode || depth > 20 {
		return nil
	}
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case key:
			return deref(n.Content[i+1])
		case "<<":
			if m := deref(n.Content[i+1]); m != nil && m.Kind == yaml.SequenceNode {
				merged = append(merged, m.Content...)
			} else {
				merged = append(merged, m)
			}
		}
	}
	for _, m := range merged {
		if v := mapValueDepth(m, key, depth+1); v != nil {
			return v
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
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// stringMap reads a mapping of strings (labels, annotations), merge keys
// included.
func stringMap(n *yaml.Node) map[string]string {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if k == "<<" {
			m := deref(n.Content[i+1])
			subs := []*yaml.Node{m}
			if m != nil && m.Kind == yaml.SequenceNode {
				subs = m.Content
			}
			for _, sub := range subs {
				for mk, mv := range stringMap(sub) {
					if _, ok := out[mk]; !ok {
						out[mk] = mv
					}
				}
			}
			continue
		}
		if v := deref(n.Content[i+1]); v != nil {
			out[k] = v.Value
		}
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
