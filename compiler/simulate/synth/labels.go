package synth

import (
	"fmt"
	"regexp/syntax"
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// selector is one vector selector of an SLI query with the sign it enters
// the query with (a subtracted selector counts negatively).
type selector struct {
	matchers []*labels.Matcher
	sign     float64
	// native: the selector reads native histograms through
	// histogram_count; with under, only observations in (lower, upper],
	// as histogram_count(h) * histogram_fraction(lower, upper, h) counts.
	native       bool
	under        bool
	lower, upper float64
}

// selectorsOf lists the vector selectors of a query, rated or not.
func selectorsOf(q string) ([]selector, error) {
	expr, err := query.NewParser().ParseExpr(q)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", q, err)
	}
	var out []selector
	var walk func(e parser.Expr, sign float64, native *selector)
	walk = func(e parser.Expr, sign float64, native *selector) {
		switch n := e.(type) {
		case *parser.VectorSelector:
			s := selector{matchers: n.LabelMatchers, sign: sign}
			if native != nil {
				s.native, s.under, s.lower, s.upper = true, native.under, native.lower, native.upper
			}
			out = append(out, s)
		case *parser.MatrixSelector:
			walk(n.VectorSelector, sign, native)
		case *parser.Call:
			if n.Func.Name == "histogram_count" && native == nil {
				native = &selector{native: true}
			}
			for _, a := range n.Args {
				walk(a, sign, native)
			}
		case *parser.BinaryExpr:
			if count, fraction, ok := query.CountUnder(n); ok {
				lower, _ := fraction.Args[0].(*parser.NumberLiteral)
				upper, _ := fraction.Args[1].(*parser.NumberLiteral)
				if lower != nil && upper != nil {
					walk(count, sign, &selector{native: true, under: true, lower: lower.Val, upper: upper.Val})
					return
				}
			}
			walk(n.LHS, sign, native)
			if n.Op == parser.SUB {
				walk(n.RHS, -sign, native)
			} else {
				walk(n.RHS, sign, native)
			}
		default:
			for _, c := range parser.Children(e) {
				if x, ok := c.(parser.Expr); ok {
					walk(x, sign, native)
				}
			}
		}
	}
	walk(expr, 1, nil)
	if len(out) == 0 {
		return nil, fmt.Errorf("query %q selects no series", q)
	}
	return out, nil
}

// count is what series x adds to the selector per unit of n and of k: its
// own linear form for a float selector, the observations it counts for a
// native one; nothing when one is a histogram and the other not.
func (s selector) count(x Series) (n, k float64) {
	if s.native != (x.hist != nil) || !s.matches(x.Labels) {
		return 0, 0
	}
	if !s.native {
		return s.sign * x.CoefN, s.sign * x.coefK
	}
	for _, o := range x.hist {
		if !s.under || o.value > s.lower && o.value <= s.upper {
			n += s.sign * o.coefN
			k += s.sign * o.coefK
		}
	}
	return n, k
}

func (s selector) matches(ls labels.Labels) bool {
	for _, m := range s.matchers {
		if !m.Matches(ls.Get(m.Name)) {
			return false
		}
	}
	return true
}

// Satisfying returns label values that the matchers accept; labels only
// constrained negatively are left out, which the matchers then see as "".
func Satisfying(ms []*labels.Matcher) (map[string]string, error) {
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
