package lint

import (
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// scalarPos maps a byte offset of a scalar's value to the file line and
// column where that byte is written. yaml.v3 gives where the scalar
// starts; block scalars start on the next line at their indentation, and
// flow scalars continue on later lines after their leading spaces.
func scalarPos(lines []string, n *yaml.Node, off int) (line, col int) {
	if n == nil {
		return 0, 0
	}
	block := n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
	quoted := n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0
	start := 0 // offset of the current source line in the value
	for i := n.Line - 1; i < len(lines); i++ {
		if i < 0 {
			break
		}
		src := lines[i]
		var from int // byte of src where the value's text begins
		switch {
		case block && i == n.Line-1:
			continue // the | or > indicator line
		case block:
			from = indentOf(lines, n.Line)
			if len(strings.TrimSpace(src)) == 0 {
				start++
				continue
			}
		case i == n.Line-1:
			from = n.Column - 1
			if quoted {
				from++
			}
		default:
			from = len(src) - len(strings.TrimLeft(src, " \t"))
		}
		from = min(from, len(src))
		text := src[from:]
		if n.Style&yaml.DoubleQuotedStyle != 0 {
			// Escapes take more bytes in the file than in the value.
			if raw, ok := rawOffset(text, off-start); ok {
				return i + 1, from + raw + 1
			}
			start += decodedLen(text) + 1
			continue
		}
		if off-start <= len(text) || i == len(lines)-1 {
			return i + 1, from + (off - start) + 1
		}
		start += len(text) + 1
	}
	return n.Line, n.Column
}

// indentOf is the indentation of a block scalar's first content line.
func indentOf(lines []string, indicator int) int {
	for i := indicator; i < len(lines); i++ {
		if t := strings.TrimLeft(lines[i], " "); t != "" {
			return len(lines[i]) - len(t)
		}
	}
	return 0
}

// rawOffset walks a double-quoted line until want decoded bytes are
// consumed; it fails when the closing quote or the line end comes first.
func rawOffset(text string, want int) (int, bool) {
	raw, got := scanQuoted(text, want)
	return raw, got == want
}

// decodedLen is how many bytes a double-quoted line holds once decoded.
func decodedLen(text string) int {
	_, got := scanQuoted(text, -1)
	return got
}

// scanQuoted decodes a double-quoted line up to stop decoded bytes (or all
// of it when stop is negative), returning the raw and decoded lengths.
func scanQuoted(text string, stop int) (raw, decoded int) {
	for raw < len(text) && text[raw] != '"' && decoded != stop {
		switch {
		case text[raw] == '\\' && raw+1 < len(text) && text[raw+1] == 'u':
			raw += 6
		case text[raw] == '\\':
			raw += 2
		default:
			raw++
		}
		decoded++
	}
	return min(raw, len(text)), decoded
}

var disableComment = regexp.MustCompile(`inferslo-lint:\s*disable=([\w/.,-]+)`)

// disables finds `# inferslo-lint: disable=<id>[,<id>]` comments.
func disables(lines []string) map[int][]string {
	out := map[int][]string{}
	for i, l := range lines {
		if m := disableComment.FindStringSubmatch(l); m != nil {
			out[i+1] = strings.Split(m[1], ",")
		}
	}
	return out
}

// suppress drops findings disabled on their line, or anywhere on the rule
// they belong to (including the comment line just above it). It indexes
// each file's rules by line once, so it is linear in findings.
func (p *pass) suppress(in []Finding) []Finding {
	files := map[string]*File{}
	for _, f := range p.files {
		files[f.Name] = f
	}
	var out []Finding
	for _, fd := range in {
		f := files[fd.File]
		if f != nil && f.disables(fd) {
			continue
		}
		out = append(out, fd)
	}
	return out
}

func (f *File) disables(fd Finding) bool {
	if len(f.disabled) == 0 {
		return false
	}
	if f.ruleAt == nil {
		f.indexRules()
	}
	off := func(ids []string) bool { return slices.Contains(ids, fd.Check) || slices.Contains(ids, "all") }
	if off(f.disabled[fd.Line]) {
		return true
	}
	if fd.Line >= 1 && fd.Line < len(f.ruleAt) {
		if r := f.ruleAt[fd.Line]; r != nil {
			return off(r.disabled)
		}
	}
	return false
}

// indexRules maps each line to the rule spanning it and gathers the ids
// each rule disables.
func (f *File) indexRules() {
	f.ruleAt = make([]*Rule, len(f.lines)+2)
	for _, r := range f.rules {
		for l := r.first - 1; l <= r.last; l++ {
			r.disabled = append(r.disabled, f.disabled[l]...)
		}
		for l := max(r.first, 1); l <= r.last && l < len(f.ruleAt); l++ {
			f.ruleAt[l] = r
		}
	}
}
