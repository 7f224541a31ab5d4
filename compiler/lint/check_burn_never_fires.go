package lint

import (
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/spec/engine"
)

// An error ratio cannot exceed 1: a burn threshold factor × (1 − objective)
// of 1 or more is never crossed, so the alert never fires.
var checkBurnNeverFires = Check{
	ID: "slo/burn-never-fires", Severity: Error,
	Summary: "A burn-rate threshold × (1 − objective) is 1 or more: the error ratio can never reach it.",
	Rule: func(r *reporter, rule *Rule) {
		if !isBurnAlert(rule) {
			return
		}
		q := rule.Query
		walk(q.Expr, func(n parser.Node, _ []parser.Node) {
			c, ok := n.(*parser.BinaryExpr)
			if !ok || (c.Op != parser.GTR && c.Op != parser.GTE) {
				return
			}
			limit, ok := constant(c.RHS)
			if !ok {
				return
			}
			// error ratio / budget > factor: the burn rate itself.
			if d, ok := unwrap(c.LHS).(*parser.BinaryExpr); ok && d.Op == parser.DIV {
				if budget, ok := constant(d.RHS); ok && budget > 0 && readsErrorRatio(d.LHS) {
					if limit*budget >= 1 {
						r.atNode(q, c.RHS, "the error ratio / %s is compared with %s: that needs an error ratio of %s, and it never exceeds 1, so this alert can never fire; the burn factor must stay below %s",
							formatFloat(budget), formatFloat(limit), formatFloat(limit*budget), formatFloat(1/budget))
					}
					return
				}
			}
			if limit < 1 || !readsErrorRatio(c.LHS) {
				return
			}
			if f, o, ok := budgetThreshold(c.RHS); ok {
				r.atNode(q, c.RHS, "%s × (1 − %s) = %s: an error ratio never exceeds 1, so this alert can never fire; the burn factor must stay below %s",
					formatFloat(f), formatFloat(o), formatFloat(limit), formatFloat(1/(1-o)))
				return
			}
			r.atNode(q, c.RHS, "the error ratio is compared with %s: it never exceeds 1, so this alert can never fire", formatFloat(limit))
		})
	},
}

// readsErrorRatio says whether an expression is an error ratio (not a
// burn rate, which may well exceed 1).
func readsErrorRatio(e parser.Expr) bool {
	for _, vs := range engine.Selectors(e) {
		if isBurnSeries(metricName(vs)) {
			return false
		}
	}
	if isRatio(e) {
		return true
	}
	for _, vs := range engine.Selectors(e) {
		if isErrorRatioSeries(metricName(vs)) {
			return true
		}
	}
	return false
}
