package lint

import (
	"github.com/prometheus/prometheus/promql/parser"
)

// A multi-window alert's short window makes it reset quickly once the burn
// stops; a short window as long as the long one does nothing.
var checkShortWindow = Check{
	ID: "slo/short-window-not-shorter", Severity: Error,
	Summary: "A multi-window burn-rate alert's short window is not shorter than its long window.",
	Rule: func(r *reporter, rule *Rule) {
		if !r.isBurnAlert(rule) {
			return
		}
		q := rule.Query
		walk(q.Expr, func(n parser.Node, _ []parser.Node) {
			b, ok := n.(*parser.BinaryExpr)
			if !ok || b.Op != parser.LAND || !r.containsBurn(b.LHS) || !r.containsBurn(b.RHS) {
				return
			}
			long, short := longest(windows(b.LHS)), longest(windows(b.RHS))
			if long > 0 && long == short {
				r.atNode(q, b.RHS, "both windows are %s: the short window must be shorter than the long one (typically 1/12 of it)", formatDuration(long))
			}
		})
	},
}
