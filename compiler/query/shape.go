// Generated PromQL is validated by shape: a fleet's rules and
// panels are a few expressions repeated with other label values
// (`{slo="a"}`, `{slo="b"}`), so a compilation parses each shape once and
// lexes the repeats.
//
// Two expressions share a shape when Prometheus' lexer gives both the same
// tokens, except the values of plain strings right after `=` or `!=` in a
// selector. The parser accepts such a value whatever its text, and the only
// property it checks (a selector needs one matcher that is not empty) is
// kept in the shape: empty and non-empty values differ. Regular expressions
// (`=~`, `!~`), strings with escapes, and strings anywhere else are part of
// the shape as written.

package query

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/prometheus/promql/parser"
)

// ShapeParser parses expressions for validation. Embedded, it is a
// parser.Parser whose ParseExpr remembers every shape that parsed.
type ShapeParser struct {
	parser.Parser
	parsed map[string]parser.Expr
	shapes Shapes
}

// NewShapeParser returns a ShapeParser with Prometheus' default parser options.
func NewShapeParser() *ShapeParser {
	return &ShapeParser{Parser: parser.NewParser(parser.Options{}), parsed: map[string]parser.Expr{}}
}

// Shape is the package's Shape, remembered as Shapes does.
func (p *ShapeParser) Shape(q string) (string, bool) { return p.shapes.Shape(q) }

// Shapes is Shape with a memory: an expression is lexed only when no
// expression that differs from it only in the text of masked strings was
// lexed before. Telling that costs one pass over the bytes, where the lexer
// costs several times as much. Not safe for concurrent use.
type Shapes struct {
	known map[string]shape
	buf   []byte
}

type shape struct {
	key string
	ok  bool
}

// Shape returns what the package's Shape returns for q.
func (s *Shapes) Shape(q string) (string, bool) {
	masked, fast := s.mask(q)
	if !fast {
		return Shape(q)
	}
	if r, ok := s.known[string(masked)]; ok {
		return r.key, r.ok
	}
	key, ok := Shape(q)
	if s.known == nil {
		s.known = map[string]shape{}
	}
	s.known[string(masked)] = shape{key, ok}
	return key, ok
}

// mask writes q with the text of every double-quoted string right after
// `=` or `!=` replaced by "e" when empty and "s" when not, or returns false
// when q has a character that could make a byte scan disagree with the
// lexer about where strings are (comments, single quotes, backticks,
// escapes). Two expressions that mask alike then differ only in strings the
// lexer reads whole (no escape, no newline, valid UTF-8) and Shape masks:
// they have the same shape.
func (s *Shapes) mask(q string) ([]byte, bool) {
	// One IndexByte per character: each is a vector scan, where
	// ContainsAny tests every byte against the set.
	for _, c := range []byte("#'`\\") {
		if strings.IndexByte(q, c) >= 0 {
			return nil, false
		}
	}
	b := s.buf[:0]
	for i := 0; i < len(q); {
		quote := strings.IndexByte(q[i:], '"')
		if quote < 0 {
			b = append(b, q[i:]...)
			break
		}
		b = append(b, q[i:i+quote]...)
		i += quote
		end := strings.IndexByte(q[i+1:], '"')
		if end < 0 {
			return nil, false
		}
		text := q[i+1 : i+1+end]
		if afterEquality(q[:i]) && !strings.ContainsRune(text, '\n') && utf8.ValidString(text) {
			if text == "" {
				b = append(b, '"', 'e', '"')
			} else {
				b = append(b, '"', 's', '"')
			}
		} else {
			b = append(b, q[i:i+2+end]...)
		}
		i += 2 + end
	}
	s.buf = b
	return b, true
}

// space is the white space the lexer skips between tokens.
func space(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// afterEquality says the text before a string ends in the lexer's `=` or
// `!=` (and spaces), not `==`, `<=` or `>=`.
func afterEquality(before string) bool {
	for len(before) > 0 && space(before[len(before)-1]) {
		before = before[:len(before)-1]
	}
	if !strings.HasSuffix(before, "=") {
		return false
	}
	before = before[:len(before)-1]
	return !strings.HasSuffix(before, "=") && !strings.HasSuffix(before, "<") && !strings.HasSuffix(before, ">")
}

// ParseExpr parses q, or, when an expression of the same shape parsed
// before, returns that expression. It is for checking that q parses: the
// expression returned for a repeated shape carries the first one's label
// values, not q's.
func (p *ShapeParser) ParseExpr(q string) (parser.Expr, error) {
	key, ok := p.Shape(q)
	if ok {
		if e, hit := p.parsed[key]; hit {
			return e, nil
		}
	}
	e, err := p.Parser.ParseExpr(q)
	if err == nil && ok {
		p.parsed[key] = e
	}
	return e, err
}

// Shape returns q's shape: its tokens with the values of matcher equalities
// masked, and false when the lexer finds an error (the parser reports it).
func Shape(q string) (string, bool) {
	var b strings.Builder
	b.Grow(len(q))
	l := parser.Lex(q)
	var it, prev parser.Item
	var n [binary.MaxVarintLen64]byte
	uvarint := func(x int) { b.Write(n[:binary.PutUvarint(n[:], uint64(x))]) }
	for {
		l.NextItem(&it)
		switch it.Typ {
		case parser.EOF:
			return b.String(), true
		case parser.ERROR:
			return "", false
		}
		uvarint(int(it.Typ))
		switch {
		case it.Typ == parser.STRING && (prev.Typ == parser.EQL || prev.Typ == parser.NEQ) && plain(it.Val):
			if len(it.Val) == 2 {
				b.WriteByte('e')
			} else {
				b.WriteByte('s')
			}
		default:
			uvarint(len(it.Val))
			b.WriteString(it.Val)
		}
		prev = it
	}
}

// plain says a quoted string has no escape sequence and is valid UTF-8, so
// unquoting it cannot fail.
func plain(quoted string) bool {
	return !strings.ContainsRune(quoted, '\\') && utf8.ValidString(quoted)
}
