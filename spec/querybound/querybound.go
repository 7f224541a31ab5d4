// Package querybound bounds a PromQL query from outside before it is
// parsed. Prometheus' parser takes time quadratic in nesting (10,000
// parentheses take a second, 40,000 most of a minute), so a spec could
// stall a run or CI; a hand-written query is short and shallow, and one
// that is not is refused with what the bounds are.
package querybound

import "fmt"

const (
	// MaxLength is the longest query accepted, in bytes: real SLI
	// queries are a few hundred.
	MaxLength = 16 << 10
	// MaxDepth is the deepest nesting of parentheses, brackets and braces
	// accepted: real queries nest less than ten deep.
	MaxDepth = 64
)

// Check returns why q is too long or too deeply nested to parse, or nil.
// It reads q once, skipping string literals and comments as PromQL's lexer
// does, so its cost is linear whatever q holds.
func Check(q string) error {
	if len(q) > MaxLength {
		return fmt.Errorf("the query is %d bytes long, above the %d inferslo parses; split it into recording rules", len(q), MaxLength)
	}
	depth, deepest := 0, 0
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '(', '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
			}
			if depth > MaxDepth {
				return fmt.Errorf("the query nests more than %d parentheses, brackets or braces deep (at byte %d); write it with less nesting", MaxDepth, i+1)
			}
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '"', '\'', '`':
			i = skipString(q, i)
		case '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		}
	}
	return nil
}

// skipString returns the index of the quote closing the string opened at
// q[i], or the end of q. Backquoted strings have no escapes.
func skipString(q string, i int) int {
	quote := q[i]
	for i++; i < len(q); i++ {
		switch {
		case q[i] == '\\' && quote != '`':
			i++
		case q[i] == quote:
			return i
		}
	}
	return i
}
