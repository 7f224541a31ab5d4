package lint

import (
	"regexp"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/promql/parser"
)

// A burn alert is recognised by its structure, not by names: it compares
// an error ratio (a ratio of rates, perhaps scaled by a constant such as
// 100) with a threshold written as factor × budget, or the ratio divided
// by the budget (the burn rate) with a factor.

// burnCondition is one comparison of a burn alert.
type burnCondition struct {
	cmp *parser.BinaryExpr
	// limit is the error ratio the condition needs (threshold / scale, or
	// factor × budget / scale for a burn rate).
	limit float64
	// factor and objective are set when the threshold is written
	// factor * (1 - objective).
	factor, objective float64
	burnRate          bool // the LHS is ratio / budget
	budget            float64
}

// slothRatio is the name Sloth gives its error ratio recordings; they are
// ratios whatever the lint set holds.
var slothRatio = regexp.MustCompile(`^slo:sli_error:ratio_rate\w+$`)

// burnConditions lists the burn comparisons of an alert (none for other
// rules).
func (p *pass) burnConditions(rule *Rule) []burnCondition {
	if rule.Alert == "" || rule.Query == nil || rule.Query.Expr == nil {
		return nil
	}
	if rule.burn != nil {
		return *rule.burn
	}
	out := []burnCondition{}
	defer func() { rule.burn = &out }()
	walk(rule.Query.Expr, func(n parser.Node, _ []parser.Node) {
		if c, ok := p.burnCondition(n); ok {
			out = append(out, c)
		}
	})
	return out
}

func (p *pass) burnCondition(n parser.Node) (burnCondition, bool) {
	c, ok := n.(*parser.BinaryExpr)
	if !ok || (c.Op != parser.GTR && c.Op != parser.GTE) || c.ReturnBool {
		return burnCondition{}, false
	}
	limit, ok := constant(c.RHS)
	if !ok || limit <= 0 {
		return burnCondition{}, false
	}
	// ratio / budget > factor: the burn rate.
	if d, ok := query.Unparen(c.LHS).(*parser.BinaryExpr); ok && d.Op == parser.DIV {
		if budget, ok := constant(d.RHS); ok && budget > 0 && budget < 1 {
			if scale, ok := p.ratioScale(d.LHS, 0); ok {
				return burnCondition{cmp: c, limit: limit * budget / scale, burnRate: true, budget: budget}, true
			}
			return burnCondition{}, false
		}
	}
	if !isFactorTimesBudget(c.RHS) {
		return burnCondition{}, false
	}
	scale, ok := p.ratioScale(c.LHS, 0)
	if !ok {
		return burnCondition{}, false
	}
	bc := burnCondition{cmp: c, limit: limit / scale}
	bc.factor, bc.objective, _ = budgetThreshold(c.RHS)
	return bc, true
}

// isFactorTimesBudget says whether a constant threshold is written as a
// product with a factor below 1 (the budget): 14.4 * 0.001, 14 * (1 - 0.99).
func isFactorTimesBudget(e parser.Expr) bool {
	b, ok := query.Unparen(e).(*parser.BinaryExpr)
	if !ok || b.Op != parser.MUL {
		return false
	}
	l, ok1 := constant(b.LHS)
	r, ok2 := constant(b.RHS)
	return ok1 && ok2 && (l > 0 && l < 1 || r > 0 && r < 1)
}

// ratioScale says whether an expression is a ratio of rates (bad / total),
// possibly multiplied by a constant, and returns that constant.
func (p *pass) ratioScale(e parser.Expr, depth int) (float64, bool) {
	if depth > 8 {
		return 0, false
	}
	switch v := query.Unparen(e).(type) {
	case *parser.AggregateExpr:
		if v.Op == parser.MAX || v.Op == parser.MIN || v.Op == parser.AVG {
			return p.ratioScale(v.Expr, depth+1)
		}
	case *parser.VectorSelector:
		name := metricName(v)
		if slothRatio.MatchString(name) {
			return 1, true
		}
		if x, ok := p.recordedExpr[name]; ok {
			return p.ratioScale(x, depth+1)
		}
	case *parser.BinaryExpr:
		switch v.Op {
		case parser.MUL:
			if k, ok := constant(v.LHS); ok && k > 0 {
				s, ok := p.ratioScale(v.RHS, depth+1)
				return k * s, ok
			}
			if k, ok := constant(v.RHS); ok && k > 0 {
				s, ok := p.ratioScale(v.LHS, depth+1)
				return k * s, ok
			}
		case parser.DIV:
			num, k := v.LHS, 1.0
			if m, ok := query.Unparen(num).(*parser.BinaryExpr); ok && m.Op == parser.MUL {
				if c, ok := constant(m.LHS); ok && c > 0 {
					num, k = m.RHS, c
				} else if c, ok := constant(m.RHS); ok && c > 0 {
					num, k = m.LHS, c
				}
			}
			if p.rateLike(num, depth+1) && p.rateLike(v.RHS, depth+1) {
				return k, true
			}
		case parser.SUB:
			// 1 - good/total is the bad share.
			if one, ok := constant(v.LHS); ok && one == 1 {
				if s, ok := p.ratioScale(v.RHS, depth+1); ok && s == 1 {
					return 1, true
				}
			}
		}
	}
	return 0, false
}

// rateLike says whether every series an expression reads is read through
// rate(), irate() or increase() (or is a recording of such), and there is
// at least one.
func (p *pass) rateLike(e parser.Expr, depth int) bool {
	if _, ok := constant(e); ok || depth > 8 {
		return false
	}
	ok, seen := true, false
	walk(e, func(n parser.Node, path []parser.Node) {
		vs, isVS := n.(*parser.VectorSelector)
		if !isVS {
			return
		}
		seen = true
		for _, a := range path {
			if c, isCall := a.(*parser.Call); isCall && (c.Func.Name == "rate" || c.Func.Name == "irate" || c.Func.Name == "increase") {
				return
			}
		}
		if p.recordedRateLike(metricName(vs), depth) {
			return
		}
		ok = false
	})
	return ok && seen
}

// recordedRateLike is rateLike of what a recording records, kept per
// recording: the windows of a burn read the same recordings many times
// over, and walking them afresh each time took seconds per rule file. A
// recording being decided (a cycle) is not rate-like.
func (p *pass) recordedRateLike(name string, depth int) bool {
	x, rec := p.recordedExpr[name]
	if !rec {
		return false
	}
	if v, done := p.rateLikeOf[name]; done {
		return v
	}
	p.rateLikeOf[name] = false
	v := p.rateLike(x, depth+1)
	p.rateLikeOf[name] = v
	return v
}

// isBurnAlert says whether an alerting rule pages on an error budget burn.
func (p *pass) isBurnAlert(rule *Rule) bool { return len(p.burnConditions(rule)) > 0 }

// isMultiwindow says whether a burn alert requires two windows at once
// (long and short): the short one resets it, so it needs no for.
func (p *pass) isMultiwindow(rule *Rule) bool {
	multi := false
	walk(rule.Query.Expr, func(n parser.Node, _ []parser.Node) {
		b, ok := n.(*parser.BinaryExpr)
		if !ok || b.Op != parser.LAND {
			return
		}
		if p.containsBurn(b.LHS) && p.containsBurn(b.RHS) {
			multi = true
		}
	})
	return multi
}

func (p *pass) containsBurn(e parser.Expr) bool {
	found := false
	walk(e, func(n parser.Node, _ []parser.Node) {
		if _, ok := p.burnCondition(n); ok {
			found = true
		}
	})
	return found
}

// budgetThreshold reads a threshold written factor * (1 - objective) (in
// either order).
func budgetThreshold(e parser.Expr) (factor, objective float64, ok bool) {
	b, isBin := query.Unparen(e).(*parser.BinaryExpr)
	if !isBin || b.Op != parser.MUL {
		return 0, 0, false
	}
	try := func(f, o parser.Expr) (float64, float64, bool) {
		fv, ok := constant(f)
		sub, isSub := query.Unparen(o).(*parser.BinaryExpr)
		if !ok || !isSub || sub.Op != parser.SUB {
			return 0, 0, false
		}
		one, ok1 := constant(sub.LHS)
		obj, ok2 := constant(sub.RHS)
		if !ok1 || !ok2 || one != 1 || obj <= 0 || obj >= 1 {
			return 0, 0, false
		}
		return fv, obj, true
	}
	if f, o, ok := try(b.LHS, b.RHS); ok {
		return f, o, true
	}
	return try(b.RHS, b.LHS)
}
