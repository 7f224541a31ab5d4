package spec

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// doc is one object of a spec file: its YAML node and where it came from.
type doc struct {
	file  string
	lines []string // the file's lines, for snippets
	node  *yaml.Node
	// prefix is the path of the object inside its document ("[2]" for the
	// third item of a YAML list), shown before property paths.
	prefix string
}

// at locates a property path (spec.objectives[0].target) inside the object.
// A path that does not exist points at the deepest part that does.
func (d *doc) at(path string) *yaml.Node {
	n := d.node
	segs := splitPath(path)
	for i := 0; i < len(segs); i++ {
		next := child(n, segs[i])
		// A key may hold dots (inferslo.dev/runbook-url): try the
		// remaining segments joined back together.
		for j := i + 1; next == nil && j < len(segs); j++ {
			if next = child(n, strings.Join(segs[i:j+1], ".")); next != nil {
				i = j
			}
		}
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// problem builds a located problem at path.
func (d *doc) problem(sev Severity, path, msg string) Problem {
	n := d.at(path)
	p := Problem{File: d.file, Path: joinPath(d.prefix, path), Message: msg, Severity: sev}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
		if n.Line >= 1 && n.Line <= len(d.lines) {
			p.Source = d.lines[n.Line-1]
		}
	}
	return p
}

func (d *doc) errorf(path, format string, args ...any) Problem {
	return d.problem(Error, path, sprintf(format, args...))
}

func (d *doc) warnf(path, format string, args ...any) Problem {
	return d.problem(Warning, path, sprintf(format, args...))
}

func joinPath(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	case strings.HasPrefix(path, "["):
		return prefix + path
	default:
		return prefix + "." + path
	}
}

// splitPath splits "spec.objectives[0].target" into spec, objectives, [0], target.
func splitPath(path string) []string {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "$"), ".")
	var out []string
	for _, part := range strings.Split(path, ".") {
		for part != "" {
			i := strings.Index(part, "[")
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.Index(part, "]")
			if j < i {
				out = append(out, part[i:])
				break
			}
			out = append(out, part[i:j+1])
			part = part[j+1:]
		}
	}
	return out
}

// child steps one path segment into a mapping (by key) or sequence ([n]).
func child(n *yaml.Node, seg string) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if strings.HasPrefix(seg, "[") && strings.HasSuffix(seg, "]") {
		i, err := strconv.Atoi(seg[1 : len(seg)-1])
		if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
			return nil
		}
		return n.Content[i]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == seg {
			return n.Content[i+1]
		}
	}
	return nil
}

// findKey finds the first mapping entry below n that match accepts and
// returns its path, for decoders that name a field or a line but not where
// it is.
func findKey(n *yaml.Node, match func(key, value *yaml.Node) bool, path string) (string, bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p, ok := findKey(c, match, path); ok {
				return p, true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := joinPath(path, n.Content[i].Value)
			if match(n.Content[i], n.Content[i+1]) {
				return p, true
			}
			if q, ok := findKey(n.Content[i+1], match, p); ok {
				return q, true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if q, ok := findKey(c, match, path+"["+strconv.Itoa(i)+"]"); ok {
				return q, true
			}
		}
	}
	return "", false
}
