package lint

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// dashboard is what a Grafana dashboard says about where its queries go:
// its datasource variables and import inputs, by name.
type dashboard struct {
	// vars maps a datasource variable or import input to its plugin type.
	vars map[string]string
}

// Datasources as far as lint can tell.
const (
	dsInherit = iota // not set here: the enclosing panel's, or the default
	dsPrometheus
	dsOther // Loki, SQL, Grafana's own ...: not PromQL
	dsMixed // each target names its own
)

func newDashboard(root *yaml.Node) *dashboard {
	d := &dashboard{vars: map[string]string{}}
	for _, v := range items(mapValue(mapValue(root, "templating"), "list")) {
		if scalarAt(v, "type") == "datasource" {
			d.vars[scalarAt(v, "name")] = strings.ToLower(scalarAt(v, "query"))
		}
	}
	for _, in := range items(mapValue(root, "__inputs")) {
		if scalarAt(in, "type") == "datasource" {
			d.vars[scalarAt(in, "name")] = strings.ToLower(scalarAt(in, "pluginId"))
		}
	}
	return d
}

// kind classifies a panel's or target's datasource: an object with a
// type, a uid or name that is a datasource variable, or a name.
func (d *dashboard) kind(ds *yaml.Node) int {
	if ds == nil {
		return dsInherit
	}
	switch ds.Kind {
	case yaml.ScalarNode:
		if ds.Tag == "!!null" || ds.Value == "" {
			return dsInherit
		}
		return d.byName(ds.Value)
	case yaml.MappingNode:
		uid := scalarAt(ds, "uid")
		switch typ := strings.ToLower(scalarAt(ds, "type")); {
		case uid == "-- Mixed --":
			return dsMixed
		case typ == "" || strings.HasPrefix(typ, "$"):
			if uid == "" {
				return dsInherit
			}
			return d.byName(uid)
		default:
			return pluginKind(typ)
		}
	}
	return dsInherit
}

// byName classifies a datasource written as a name or uid, perhaps a
// variable ($ds, ${ds}, [[ds]]).
func (d *dashboard) byName(name string) int {
	switch name {
	case "-- Mixed --":
		return dsMixed
	case "-- Grafana --", "-- Dashboard --", "grafana":
		return dsOther
	}
	if m := grafanaVar.FindStringSubmatch(name); m != nil && m[0] == name {
		if plugin, ok := d.vars[variableName(m[0])]; ok && plugin != "" {
			return pluginKind(plugin)
		}
	}
	// An unknown name: the default datasource is usually Prometheus, and a
	// name that says otherwise is taken at its word.
	return pluginKind(strings.ToLower(name))
}

// pluginKind tells a Prometheus-compatible datasource plugin (or name)
// from others.
func pluginKind(plugin string) int {
	for _, other := range []string{"loki", "elasticsearch", "influx", "postgres", "mysql", "mssql", "tempo", "jaeger", "zipkin", "cloudwatch", "stackdriver", "graphite", "opentsdb", "testdata", "__expr__", "datasource", "victoriametrics-logs", "clickhouse", "pyroscope", "parca"} {
		if strings.Contains(plugin, other) {
			return dsOther
		}
	}
	return dsPrometheus
}

// targets finds every target expr of a dashboard, in rows and nested
// panels alike, with the datasource each inherits; targets of
// non-Prometheus datasources (Loki, SQL ...) are not PromQL.
func (f *File) targets(p *pass, d *dashboard, n *yaml.Node, inherited int) {
	switch n.Kind {
	case yaml.MappingNode:
		ds := inherited
		if k := d.kind(mapValue(n, "datasource")); k != dsInherit {
			ds = k
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			switch k {
			case "targets":
				for _, t := range items(v) {
					tds := ds
					if k := d.kind(mapValue(t, "datasource")); k != dsInherit {
						tds = k
					}
					if tds == dsOther {
						continue
					}
					if e := mapValue(t, "expr"); e != nil && e.Kind == yaml.ScalarNode && strings.TrimSpace(e.Value) != "" {
						f.dashboardQuery(p, e, tds == dsPrometheus)
					}
				}
			case "templating", "annotations", "datasource", "__inputs":
			default:
				f.targets(p, d, v, ds)
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			f.targets(p, d, c, inherited)
		}
	}
}

// logQL tells LogQL (a stream selector piped into filters or parsers)
// from PromQL, for targets whose datasource lint cannot resolve.
var logQL = regexp.MustCompile(`\}\s*(\|[=~]|!=\s*"|!~\s*"|\|\s*(json|logfmt|pattern|regexp|unpack|line_format|label_format|unwrap|drop|keep|decolorize)\b)`)

// dashboardQuery parses a target's expr with its Grafana variables
// substituted. sure says the datasource is known to be Prometheus; when
// it is not, LogQL is left alone.
func (f *File) dashboardQuery(p *pass, n *yaml.Node, sure bool) {
	if !sure && logQL.MatchString(n.Value) {
		return
	}
	f.query(p, n, nil, true)
}

// grafanaVar matches what Grafana interpolates: $name, ${name[:format]}
// and [[name[:format]]].
var grafanaVar = regexp.MustCompile(`\$\{([^}]*)\}|\$(\w+)|\[\[([^\]]+)\]\]`)

// variableName is the variable a match names, without braces or format.
func variableName(v string) string {
	v = strings.TrimPrefix(v, "$")
	v = strings.Trim(v, "{}[]")
	if i := strings.IndexAny(v, ":."); i >= 0 {
		v = v[:i]
	}
	return v
}

// variableMark starts the name a Grafana variable is replaced by; a series
// name containing it is not known (metricName returns "").
const variableMark = "__grafana_"

// substitution is one Grafana variable replaced in a query.
type substitution struct {
	start, end int // in the input
	name       string
	role       int
}

// Roles a variable plays where it stands.
const (
	roleText     = iota // inside a quoted string: left alone
	roleDuration        // a range, subquery step or offset
	roleName            // a metric or label name, or glued to one
	roleValue           // a number or an expression: tried as both
)

// substituteVariables replaces Grafana template variables by text that
// parses where each stands: a duration in ranges and offsets, a name in a
// metric, label or grouping position, else a number (or, when that does
// not parse, a series). orig maps offsets of the result back to the input.
func substituteVariables(s string, asSeries bool) (out string, orig func(int) int, subs []substitution) {
	for _, l := range grafanaVar.FindAllStringIndex(s, -1) {
		subs = append(subs, substitution{start: l[0], end: l[1], name: variableName(s[l[0]:l[1]]), role: roleOf(s, l[0], l[1])})
	}
	if len(subs) == 0 {
		return s, nil, nil
	}
	type shift struct{ at, in int } // output offset at, input offset in
	var b strings.Builder
	var shifts []shift
	last := 0
	for _, sub := range subs {
		b.WriteString(s[last:sub.start])
		repl := s[sub.start:sub.end]
		switch sub.role {
		case roleDuration:
			repl = "5m"
		case roleName:
			repl = variableMark + sanitizeName(sub.name) + "__"
		case roleValue:
			repl = "1"
			if asSeries {
				repl = variableMark + sanitizeName(sub.name) + "__"
			}
		}
		b.WriteString(repl)
		shifts = append(shifts, shift{at: b.Len(), in: sub.end})
		last = sub.end
	}
	b.WriteString(s[last:])
	return b.String(), func(off int) int {
		base, in := 0, 0
		for _, sh := range shifts {
			if off >= sh.at {
				base, in = sh.at, sh.in
			}
		}
		return in + off - base
	}, subs
}

func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

func isNameByte(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// roleOf decides what the variable at s[start:end] stands for.
func roleOf(s string, start, end int) int {
	if quoted(s[:start]) {
		return roleText
	}
	name := variableName(s[start:end])
	before := strings.TrimRight(s[:start], " \t\n")
	after := strings.TrimLeft(s[end:], " \t\n")
	switch {
	case strings.HasSuffix(before, "[") || strings.HasSuffix(before, ":") && strings.LastIndex(before, "[") > strings.LastIndex(before, "]"):
		return roleDuration
	case hasWordSuffix(strings.TrimSuffix(before, "-"), "offset"):
		return roleDuration
	case start > 0 && isNameByte(s[start-1]) || end < len(s) && isNameByte(s[end]):
		return roleName
	case strings.HasPrefix(after, "{") || strings.HasPrefix(after, "[") && !strings.HasPrefix(after, "[["):
		return roleName
	case inGrouping(before):
		return roleName
	case (strings.HasSuffix(before, "{") || strings.HasSuffix(before, ",")) && labelOperator(after):
		return roleName
	}
	switch name {
	case "__interval", "__rate_interval", "__range", "__auto", "__interval_raw", "__rate_interval_raw", "__range_raw":
		return roleDuration
	}
	return roleValue
}

// quoted says whether the end of prefix is inside a PromQL string or
// comment, where a variable is just text.
func quoted(prefix string) bool {
	var q byte
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		switch {
		case q == '#':
			if c == '\n' {
				q = 0
			}
		case q == 0 && (c == '"' || c == '\'' || c == '`' || c == '#'):
			q = c
		case q != 0 && c == '\\' && q != '`':
			i++
		case q != 0 && c == q:
			q = 0
		}
	}
	return q != 0
}

func hasWordSuffix(s, word string) bool {
	return strings.HasSuffix(s, word) && (len(s) == len(word) || !isNameByte(s[len(s)-len(word)-1]))
}

// inGrouping says whether text ending in before is inside the label list
// of by, without, on, ignoring, group_left or group_right.
func inGrouping(before string) bool {
	i := len(before) - 1
	for ; i >= 0; i-- {
		c := before[i]
		if c == '(' {
			break
		}
		if !(isNameByte(c) || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '$' || c == '{' || c == '}' || c == '[' || c == ']' || c == '.') {
			return false
		}
	}
	if i < 0 {
		return false
	}
	w := strings.TrimRight(before[:i], " \t\n")
	for _, kw := range []string{"by", "without", "on", "ignoring", "group_left", "group_right"} {
		if hasWordSuffix(w, kw) {
			return true
		}
	}
	return false
}

func labelOperator(after string) bool {
	for _, op := range []string{"=~", "!~", "!=", "="} {
		if strings.HasPrefix(after, op) {
			return true
		}
	}
	return false
}
