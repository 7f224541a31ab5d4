package lint

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// lokiRules is why a Loki ruler file is skipped.
const lokiRules = "a Loki ruler file (its expressions are LogQL): lint reads PromQL"

// logQLRules says whether any rule of the groups is LogQL: the file is for
// Loki's ruler, whose format is Prometheus' with another query language.
func logQLRules(groups *yaml.Node) bool {
	for _, g := range items(groups) {
		for _, r := range items(mapValue(g, "rules")) {
			if e := mapValue(r, "expr"); e != nil && logQL.MatchString(e.Value) {
				return true
			}
		}
	}
	return false
}

// configMap lints the rule files a ConfigMap holds in its data (the way
// Prometheus' Helm charts and operators mount them), positions mapped into
// the embedded text.
func (f *File) configMap(p *pass, n *yaml.Node) {
	data := mapValue(n, "data")
	if data == nil || data.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(data.Content); i += 2 {
		v := deref(data.Content[i+1])
		if v == nil || v.Kind != yaml.ScalarNode || !strings.Contains(v.Value, "groups") {
			continue
		}
		var doc yaml.Node
		err := yaml.Unmarshal([]byte(v.Value), &doc)
		lineOff, colOff := f.embeddedOffset(v)
		if err != nil {
			if linted.MatchString(v.Value) {
				f.Kind = KindConfigMap
				line := yamlErrorLine(err)
				if line > 0 && lineOff >= 0 {
					line += lineOff
				} else {
					line = v.Line
				}
				p.with(checkSyntax).at(f, line, 0, "the rule file in data.%s is not valid YAML: %s", data.Content[i].Value, strings.TrimPrefix(err.Error(), "yaml: "))
			}
			continue
		}
		root := &doc
		if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
			root = root.Content[0]
		}
		if mapValue(root, "groups") == nil {
			continue
		}
		f.Kind = KindConfigMap
		shift(root, v, lineOff, colOff)
		if logQLRules(mapValue(root, "groups")) {
			continue
		}
		f.strictKeys(p, root, "file", map[string]bool{"groups": true}, false)
		f.groups(p, mapValue(root, "groups"), false)
	}
}

// embeddedOffset returns what maps a line and column of a block scalar's
// text to the file's: the scalar's text starts on the next line, indented.
// Other styles have no such map (-1).
func (f *File) embeddedOffset(v *yaml.Node) (line, col int) {
	if v.Style&yaml.LiteralStyle == 0 {
		return -1, -1
	}
	for i := v.Line; i < len(f.lines); i++ {
		if l := f.lines[i]; strings.TrimSpace(l) != "" {
			return v.Line, len(l) - len(strings.TrimLeft(l, " "))
		}
	}
	return -1, -1
}

// shift moves the nodes of an embedded document to their place in the
// file, or onto the scalar holding them when the place is unknown.
func shift(n *yaml.Node, v *yaml.Node, lineOff, colOff int) {
	if lineOff < 0 {
		n.Line, n.Column, n.Style = v.Line, v.Column, n.Style&^(yaml.LiteralStyle|yaml.FoldedStyle)
	} else {
		n.Line += lineOff
		n.Column += colOff
	}
	for _, c := range n.Content {
		shift(c, v, lineOff, colOff)
	}
}

// catalogQueries lints the queries of inferslo's catalog (catalog/slos.json).
func (f *File) catalogQueries(p *pass, slos *yaml.Node) {
	for _, s := range items(slos) {
		qs := mapValue(s, "queries")
		if qs == nil || qs.Kind != yaml.MappingNode {
			continue
		}
		for i := 1; i < len(qs.Content); i += 2 {
			if q := deref(qs.Content[i]); q != nil && q.Kind == yaml.ScalarNode && q.Value != "" {
				f.query(p, q, nil, false)
			}
		}
	}
}

// ruleTestQueries lints the expressions of a promtool unit test file
// (promql_expr_test).
func (f *File) ruleTestQueries(p *pass, tests *yaml.Node) {
	for _, t := range items(tests) {
		for _, e := range items(mapValue(t, "promql_expr_test")) {
			if q := mapValue(e, "expr"); q != nil && q.Kind == yaml.ScalarNode && q.Value != "" {
				f.query(p, q, nil, false)
			}
		}
	}
}
