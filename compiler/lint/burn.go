package lint

import (
	"strings"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/spec/engine"
)

// isBurnAlert says whether an alerting rule pages on an error budget burn:
// its name or the series it reads speak of burn rates or error ratios, or
// it compares against a threshold written as factor × (1 − objective).
func isBurnAlert(rule *Rule) bool {
	if rule.Alert == "" || rule.Query == nil || rule.Query.Expr == nil {
		return false
	}
	if strings.Contains(strings.ToLower(rule.Alert), "burn") {
		return true
	}
	for _, vs := range engine.Selectors(rule.Query.Expr) {
		if isBurnSeries(metricName(vs)) || isErrorRatioSeries(metricName(vs)) {
			return true
		}
	}
	found := false
	walk(rule.Query.Expr, func(n parser.Node, _ []parser.Node) {
		if c, ok := n.(*parser.BinaryExpr); ok && c.Op.IsComparisonOperator() {
			if _, _, ok := budgetThreshold(c.RHS); ok {
				found = true
			}
		}
	})
	return found
}

func isBurnSeries(name string) bool { return strings.Contains(strings.ToLower(name), "burn") }

func isErrorRatioSeries(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "error") && strings.Contains(l, "ratio")
}

// budgetThreshold reads a threshold written factor * (1 - objective) (in
// either order).
func budgetThreshold(e parser.Expr) (factor, objective float64, ok bool) {
	b, isBin := unwrap(e).(*parser.BinaryExpr)
	if !isBin || b.Op != parser.MUL {
		return 0, 0, false
	}
	try := func(f, o parser.Expr) (float64, float64, bool) {
		fv, ok := constant(f)
		sub, isSub := unwrap(o).(*parser.BinaryExpr)
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
