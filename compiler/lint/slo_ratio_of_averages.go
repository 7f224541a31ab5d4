package lint

import (
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/prometheus/prometheus/promql/parser"
)

// avg(a) / avg(b) weighs every series (or every sample) alike, whatever
// its traffic: the ratio is not the fraction of events.
var checkRatioOfAverages = Check{
	ID: "slo/ratio-of-averages", Severity: Warning,
	Summary: "A ratio divides two averages, so it is not weighted by event counts.",
	Query: func(r *reporter, q *Query) {
		walk(q.Expr, func(n parser.Node, _ []parser.Node) {
			b, ok := n.(*parser.BinaryExpr)
			if ok && b.Op == parser.DIV && isAverage(b.LHS) && isAverage(b.RHS) {
				r.atNode(q, b, "a ratio of averages is not weighted by events; divide sums (sum(rate(bad[w])) / sum(rate(total[w])))")
			}
		})
	},
}

func isAverage(e parser.Expr) bool {
	switch v := query.Unparen(e).(type) {
	case *parser.AggregateExpr:
		return v.Op == parser.AVG
	case *parser.Call:
		return v.Func.Name == "avg_over_time"
	}
	return false
}
