package simulate

import (
	"fmt"
	"regexp/syntax"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// selector is one vector selector of an SLI query with the sign it enters
// the query with (a subtracted selector counts negatively).
type selector struct {
	matchers []*labels.Matcher
	sign     float64
}

// selectorsOf lists the vector selectors of a query, rated or not.
func selectorsOf(query string) ([]selector, error) {
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(query)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", query, err)
	}
	var out []selector
	var walk func(e parser.Expr, sign float64)
	walk = func(e parser.Expr, sign float64) {
		switch n := e.(type) {
		case *parser.VectorSelector:
			out = append(out, selector{matchers: n.LabelMatchers, sign: sign})
		case *parser.MatrixSelector:
			walk(n.VectorSelector, sign)
		case *parser.BinaryExpr:
			walk(n.LHS, sign)
			if n.Op == parser.SUB {
				walk(n.RHS, -sign)
			} else {
				walk(n.RHS, sign)
			}
		default:
			for _, c := range parser.Children(e) {
				if x, ok := c.(parser.Expr); ok {
					walk(x, sign)
				}
			}
		}
	}
	walk(expr, 1)
	if len(out) == 0 {
		return nil, fmt.Errorf("query %q selects no series", query)
	}
	return out, nil
}

func (s selector) matches(ls labels.Labels) bool {
	for _, m := range s.matchers {
		if !m.Matches(ls.Get(m.Name)) {
			return false
		}
	}
	return true
}

// satisfying returns label values that the matchers accept; labels only
// constrained negatively are left out, which the matchers then see as "".
func satisfying(ms []*labels.Matcher) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range ms {
		switch m.Type {
		case labels.MatchEqual:
			out[m.Name] = m.Value
		case labels.MatchRegexp:
			v, err := exampleOf(m.Value)
			if err != nil {
				return nil, fmt.Errorf("label %s=~%q: %w", m.Name, m.Value, err)
			}
			out[m.Name] = v
		}
	}
	for _, m := range ms {
		if !m.Matches(out[m.Name]) {
			v := "inferslo-sim"
			if !m.Matches(v) {
				return nil, fmt.Errorf("no value found for label %s that satisfies %s", m.Name, m)
			}
			out[m.Name] = v
		}
	}
	return out, nil
}

// violating returns a value of m's label that m rejects, or false.
func violating(m *labels.Matcher) (string, bool) {
	candidates := []string{m.Value + "-other", "inferslo-other", ""}
	if m.Type == labels.MatchNotEqual {
		candidates = append([]string{m.Value}, candidates...)
	}
	if m.Type == labels.MatchNotRegexp {
		if v, err := exampleOf(m.Value); err == nil {
			candidates = append([]string{v}, candidates...)
		}
	}
	for _, c := range candidates {
		if !m.Matches(c) {
			return c, true
		}
	}
	return "", false
}

// exampleOf builds a short string that the (fully anchored) regular
// expression matches, so that synthetic series satisfy selectors like
// code=~"5..".
func exampleOf(re string) (string, error) {
	r, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var gen func(r *syntax.Regexp)
	gen = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			if len(r.Rune) > 0 {
				b.WriteRune(pickRune(r.Rune))
			}
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('x')
		case syntax.OpCapture:
			gen(r.Sub[0])
		case syntax.OpConcat:
			for _, s := range r.Sub {
				gen(s)
			}
		case syntax.OpAlternate:
			gen(r.Sub[0])
		case syntax.OpPlus:
			gen(r.Sub[0])
		case syntax.OpRepeat:
			for i := 0; i < r.Min; i++ {
				gen(r.Sub[0])
			}
		}
	}
	gen(r)
	m, err := labels.NewMatcher(labels.MatchRegexp, "x", re)
	if err != nil {
		return "", err
	}
	if !m.Matches(b.String()) {
		return "", fmt.Errorf("could not build a value it matches")
	}
	return b.String(), nil
}

// pickRune prefers a digit or lower-case letter of a character class, for
// readable label values.
func pickRune(ranges []rune) rune {
	for i := 0; i+1 < len(ranges); i += 2 {
		for x := ranges[i]; x <= ranges[i+1] && x < ranges[i]+128; x++ {
			if x >= '0' && x <= '9' || x >= 'a' && x <= 'z' {
				return x
			}
		}
	}
	return ranges[0]
}
