package lint

import (
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/spec/engine"
	"github.com/prometheus/prometheus/promql/parser"
)

// rate() assumes a counter: on a gauge it turns every dip into a reset.
var checkRateOnGauge = Check{
	ID: "promql/rate-on-gauge", Severity: Error,
	Summary: "rate(), irate() or increase() is applied to a gauge the engine catalog knows.",
	Query: func(r *reporter, q *Query) {
		walk(q.Expr, func(n parser.Node, _ []parser.Node) {
			call, ok := n.(*parser.Call)
			if !ok || (call.Func.Name != "rate" && call.Func.Name != "irate" && call.Func.Name != "increase") || len(call.Args) == 0 {
				return
			}
			for _, vs := range query.Selectors(call.Args[0]) {
				if f, ok := r.catalog.lookup(metricName(vs)); ok && f.Kind == engine.KindGauge && f.Suffix == "" {
					r.atNode(q, call, "%s is a gauge: %s() treats every decrease as a counter reset; use avg_over_time, max_over_time or deriv", f.Name, call.Func.Name)
				}
			}
		})
	},
}
