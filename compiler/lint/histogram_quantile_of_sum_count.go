package lint

import (
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/promql/parser"
)

// A histogram's _sum and _count carry no distribution: a quantile needs
// the _bucket series.
var checkQuantileOfSumCount = Check{
	ID: "histogram/quantile-of-sum-count", Severity: Error,
	Summary: "histogram_quantile reads a histogram's _sum or _count instead of its _bucket series.",
	Query: func(r *reporter, q *Query) {
		walk(q.Expr, func(n parser.Node, _ []parser.Node) {
			call, ok := n.(*parser.Call)
			if !ok || call.Func.Name != "histogram_quantile" || len(call.Args) < 2 {
				return
			}
			for _, vs := range query.Selectors(call.Args[1]) {
				name := metricName(vs)
				for _, suf := range []string{"_sum", "_count"} {
					if base, ok := strings.CutSuffix(name, suf); ok {
						r.atNode(q, vs, "histogram_quantile needs buckets, and %s has none; read %s_bucket", name, base)
					}
				}
			}
		})
	},
}
