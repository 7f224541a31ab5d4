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
}

// NewShapeParser returns a ShapeParser with Prometheus' default parser options.
func NewShapeParser() *ShapeParser {
	return &ShapeParser{Parser: parser.NewParser(parser.Options{}), parsed: map[string]parser.Expr{}}
}

// ParseExpr parses q, or, when an expression of the same shape parsed
// before, returns that expression. It is for checking that q parses: the
// expression returned for a repeated shape carries the first one's label
// values, not q's.
func (p *ShapeParser) ParseExpr(q string) (parser.Expr, error) {
	key, ok := Shape(q)
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
