package lint

import (
	"strings"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/promql/parser"
)

// Averaging ratios gives a quiet hour the weight of a busy one (or a small
// replica the weight of a big one): the result is not the fraction of
// events over the window.
var checkAverageOfRatios = Check{
	ID: "slo/average-of-ratios", Severity: Warning,
	Summary: "An average is taken over ratios, so it is not weighted by event counts.",
	Query: func(r *reporter, q *Query) {
		walk(q.Expr, func(n parser.Node, _ []parser.Node) {
			var arg parser.Expr
			switch v := n.(type) {
			case *parser.AggregateExpr:
				if v.Op == parser.AVG {
					arg = v.Expr
				}
			case *parser.Call:
				if v.Func.Name == "avg_over_time" && len(v.Args) == 1 {
					arg = v.Args[0]
				}
			}
			if arg != nil && isRatio(arg) && !rawErrorRatio(n, arg) {
				r.atNode(q, n, "an average of ratios is not weighted by events; sum the events over the window and divide once")
			}
		})
	},
}

// rawErrorRatio tells inferslo's time average of its own error ratio: it
// records one over time only for a raw SLI (OpenSLO's rawMetric), a ratio
// without events whose spec weights each evaluation alike, so the average
// is the SLI itself.
func rawErrorRatio(n parser.Node, arg parser.Expr) bool {
	call, ok := n.(*parser.Call)
	if !ok || call.Func.Name != "avg_over_time" {
		return false
	}
	m, ok := query.Unparen(arg).(*parser.MatrixSelector)
	if !ok {
		return false
	}
	vs, ok := m.VectorSelector.(*parser.VectorSelector)
	return ok && metricName(vs) == model.ErrorRatio
}

// isRatio says whether an expression yields a ratio: a division of
// series, or a recording rule named as one.
func isRatio(e parser.Expr) bool {
	switch v := query.Unparen(e).(type) {
	case *parser.MatrixSelector:
		return isRatio(v.VectorSelector)
	case *parser.SubqueryExpr:
		return isRatio(v.Expr)
	case *parser.VectorSelector:
		n := metricName(v)
		return strings.Contains(n, ":") && strings.Contains(n[strings.LastIndex(n, ":"):], "ratio")
	case *parser.BinaryExpr:
		if v.Op != parser.DIV {
			return false
		}
		_, lc := constant(v.LHS)
		_, rc := constant(v.RHS)
		return !lc && !rc
	}
	return false
}
