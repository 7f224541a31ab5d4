package rules

import (
	"bytes"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/rulefmt"
	"gopkg.in/yaml.v3"
)

// GroupStyle shapes rule groups for the file that holds them.
type GroupStyle struct {
	// LabelsBeforeRules puts group labels before the rules, as the
	// PrometheusRule CRD lists its fields; rule files list them after.
	LabelsBeforeRules bool
	// PartialResponseStrategy is the Thanos field, written before the rules
	// when set.
	PartialResponseStrategy string
}

// AppendGroups writes rule groups as the `groups:` sequence of a rule file,
// every line indented by indent spaces. The bytes are those yaml.v3 writes
// with an indent of 2 (a test holds the two together), produced without
// reflection: rule files are most of what a compilation writes. Scalars the
// fast path cannot prove plain go through yaml.v3 one at a time.
func AppendGroups(b []byte, indent int, groups []rulefmt.RuleGroup, style GroupStyle) []byte {
	pad := strings.Repeat(" ", indent)
	b = append(b, pad...)
	b = append(b, "groups:\n"...)
	item := pad + "  - "
	in := pad + "    "
	for _, g := range groups {
		b = appendScalar(b, item, in, "name", g.Name)
		if g.Interval != 0 {
			b = appendScalar(b, in, in, "interval", g.Interval.String())
		}
		if g.QueryOffset != nil {
			b = appendScalar(b, in, in, "query_offset", g.QueryOffset.String())
		}
		if g.Limit != 0 {
			b = appendYAML(b, in, in, map[string]int{"limit": g.Limit})
		}
		if style.LabelsBeforeRules {
			b = appendMap(b, in, "labels", g.Labels)
		}
		if style.PartialResponseStrategy != "" {
			b = appendScalar(b, in, in, "partial_response_strategy", style.PartialResponseStrategy)
		}
		if len(g.Rules) == 0 {
			b = append(b, in...)
			b = append(b, "rules: []\n"...)
		} else {
			b = append(b, in...)
			b = append(b, "rules:\n"...)
		}
		for _, r := range g.Rules {
			b = appendRule(b, in+"  - ", in+"    ", r)
		}
		if !style.LabelsBeforeRules {
			b = appendMap(b, in, "labels", g.Labels)
		}
	}
	return b
}

// appendIndented appends block to b, every line but blank ones prefixed
// with pad, as AppendGroups indents them; b grows once.
func appendIndented(b, block []byte, pad string) []byte {
	if pad == "" {
		return append(b, block...)
	}
	b = slices.Grow(b, len(block)+bytes.Count(block, []byte{'\n'})*len(pad))
	for line := range bytes.Lines(block) {
		if len(line) > 1 {
			b = append(b, pad...)
		}
		b = append(b, line...)
	}
	return b
}

// sizeHint is about the encoded size of groups, so their buffer is
// allocated once.
func sizeHint(groups []rulefmt.RuleGroup) int {
	n := 0
	for _, g := range groups {
		n += 64 + len(g.Name)
		for _, r := range g.Rules {
			n += 96 + len(r.Record) + len(r.Alert) + len(r.Expr)
			for _, m := range []map[string]string{r.Labels, r.Annotations} {
				for k, v := range m {
					n += 8 + len(k) + len(v)
				}
			}
		}
	}
	return n + n/8
}

func appendRule(b []byte, first, in string, r rulefmt.Rule) []byte {
	lead := first
	field := func(key, value string) {
		if value != "" {
			b = appendScalar(b, lead, in, key, value)
			lead = in
		}
	}
	field("record", r.Record)
	field("alert", r.Alert)
	// expr is never omitted.
	b = appendScalar(b, lead, in, "expr", r.Expr)
	if r.For != 0 {
		b = appendScalar(b, in, in, "for", r.For.String())
	}
	if r.KeepFiringFor != 0 {
		b = appendScalar(b, in, in, "keep_firing_for", r.KeepFiringFor.String())
	}
	b = appendMap(b, in, "labels", r.Labels)
	b = appendMap(b, in, "annotations", r.Annotations)
	return b
}

// appendScalar writes `key: value` at lead (the first line's prefix) and
// continues any further lines at in.
func appendScalar(b []byte, lead, in, key, value string) []byte {
	isPlain := plain(value)
	if !plain(key) || !isPlain && !singleQuoted(value) && !literal(value) && !decimal(value) {
		return appendQuoted(b, lead, in, key, value)
	}
	b = append(b, lead...)
	b = append(b, key...)
	b = append(b, ": "...)
	switch {
	case isPlain:
		b = append(b, value...)
	case decimal(value):
		b = append(b, '"')
		b = append(b, value...)
		b = append(b, '"')
	case singleQuoted(value):
		b = append(b, '\'')
		for i := 0; i < len(value); i++ {
			if value[i] == '\'' {
				b = append(b, '\'')
			}
			b = append(b, value[i])
		}
		b = append(b, '\'')
	default:
		// One line break at the end keeps it ("|"), none strips ("|-").
		body, chomp := value, "|-"
		if strings.HasSuffix(value, "\n") {
			body, chomp = value[:len(value)-1], "|"
		}
		b = append(b, chomp...)
		for line := range strings.SplitSeq(body, "\n") {
			b = append(b, '\n')
			if line != "" {
				b = append(b, in...)
				b = append(b, "  "...)
				b = append(b, line...)
			}
		}
	}
	return append(b, '\n')
}

// singleQuoted reports whether yaml.v3 certainly writes s single-quoted: one
// line of printable ASCII that reads as a string but not as a plain scalar.
func singleQuoted(s string) bool {
	if s == "" || len(s) <= 5 && reserved(s) {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '(') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// decimal reports whether s is a decimal number (an optional minus, digits,
// and optionally a point and digits), which reads as a number, so yaml.v3
// writes the string double-quoted; its characters need no escape.
func decimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, point := strings.Cut(s, ".")
	digits := func(d string) bool {
		for i := 0; i < len(d); i++ {
			if d[i] < '0' || d[i] > '9' {
				return false
			}
		}
		return d != ""
	}
	return digits(whole) && (!point || digits(frac))
}

// literal reports whether yaml.v3 certainly writes s as a literal block
// with the default indentation: lines of printable ASCII, the first
// starting with a letter or `(`, no line ending in a space, and at most
// one line break at the end.
func literal(s string) bool {
	if !strings.Contains(s, "\n") || strings.HasSuffix(s, "\n\n") {
		return false
	}
	if c := s[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '(') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' {
			if s[i-1] == ' ' {
				return false
			}
			continue
		}
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return s[len(s)-1] != ' '
}

// appendQuoted leaves the style of value to yaml.v3, except that a scalar
// with line breaks other than a literal block of plain lines is written
// double-quoted on one line: yaml.v3 would indent its continuation lines
// for the top level, not for where the scalar sits.
func appendQuoted(b []byte, lead, in, key, value string) []byte {
	enc := encodeYAML(map[string]string{key: value})
	first, _, _ := bytes.Cut(enc, []byte("\n"))
	literal := bytes.Contains(first, []byte(": |"))
	// yaml.v3 also drops a leading line break from a literal block.
	if strings.ContainsAny(value, "\r\u0085\u2028\u2029") || strings.Contains(value, "\n") && (!literal || value[0] == '\n') {
		node := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Style: yaml.DoubleQuotedStyle},
		}}
		enc = encodeYAML(node)
	}
	return indentLines(b, lead, in, enc)
}

// appendMap writes a string map under key, keys in yaml.v3's order; empty
// maps are omitted as `omitempty` does.
func appendMap(b []byte, in, key string, m map[string]string) []byte {
	if len(m) == 0 {
		return b
	}
	keys := make([]string, 0, len(m))
	simple := true
	for k := range m {
		simple = simple && simpleKey(k)
		keys = append(keys, k)
	}
	if simple {
		// For keys of lower-case letters and underscores, yaml.v3's order
		// is byte order.
		slices.Sort(keys)
	} else {
		keys = yamlOrder(keys)
	}
	b = append(b, in...)
	b = append(b, key...)
	b = append(b, ":\n"...)
	inner := in + "  "
	for _, k := range keys {
		if simple {
			b = appendScalar(b, inner, inner, k, m[k])
		} else {
			b = appendQuoted(b, inner, inner, k, m[k])
		}
	}
	return b
}

// yamlOrder sorts keys as yaml.v3 sorts map keys, by asking it.
func yamlOrder(keys []string) []string {
	index := make(map[string]int, len(keys))
	for i, k := range keys {
		index[k] = i
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(encodeYAML(index), &doc); err != nil {
		panic("decode yaml: " + err.Error())
	}
	m := doc.Content[0]
	out := make([]string, 0, len(keys))
	for i := 1; i < len(m.Content); i += 2 {
		var n int
		if err := m.Content[i].Decode(&n); err != nil {
			panic("decode yaml: " + err.Error())
		}
		out = append(out, keys[n])
	}
	return out
}

// appendYAML encodes v with yaml.v3 and indents its lines: the first by
// lead, the rest by in (blank lines stay blank, as yaml.v3 writes them).
func appendYAML(b []byte, lead, in string, v any) []byte {
	return indentLines(b, lead, in, encodeYAML(v))
}

func encodeYAML(v any) []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		// Strings, numbers and maps of them always encode.
		panic("encode yaml: " + err.Error())
	}
	return buf.Bytes()
}

func indentLines(b []byte, lead, in string, enc []byte) []byte {
	for i, line := range bytes.SplitAfter(bytes.TrimSuffix(enc, []byte("\n")), []byte("\n")) {
		switch {
		case i == 0:
			b = append(b, lead...)
		case len(line) > 1:
			b = append(b, in...)
		}
		b = append(b, line...)
	}
	return append(b, '\n')
}

func simpleKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return k != ""
}

// plain reports whether yaml.v3 certainly writes s as a plain scalar: a
// single line of printable ASCII, starting with a letter or `(` (or a
// Prometheus duration), that no YAML reader takes for anything but a
// string. Anything else is left to yaml.v3.
func plain(s string) bool {
	if s == "" || len(s) <= 5 && reserved(s) {
		return false
	}
	c := s[0]
	letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '('
	if !letter && !duration(s) && !arithmetic(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return false
		}
		if c == ' ' && (i+1 == len(s) || s[i+1] == '#') {
			return false
		}
		if c == ':' && (i+1 == len(s) || s[i+1] == ' ') {
			return false
		}
	}
	return true
}

// arithmetic reports whether s starts with a number, a space, an operator
// and a space, as `1 - x` does: no YAML number, boolean, null or timestamp
// has a space after its leading digits.
func arithmetic(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
	}
	return i > 0 && s[i-1] != '.' && len(s) >= i+4 && s[i] == ' ' && strings.IndexByte("+-*/", s[i+1]) >= 0 && s[i+2] == ' ' && s[i+3] != ' '
}

// reserved words read as booleans or null by YAML 1.1 or 1.2 readers.
func reserved(s string) bool {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~":
		return true
	}
	return false
}

// duration matches Prometheus durations such as 1m or 4m40s: digits and
// unit letters, none of which make a YAML number.
func duration(s string) bool {
	letters := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case strings.IndexByte("ywdhms", c) >= 0:
			letters = true
		default:
			return false
		}
	}
	return letters
}
