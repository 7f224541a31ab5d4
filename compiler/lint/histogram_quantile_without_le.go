package lint

import (
	"slices"
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/promql/parser"
)

// histogram_quantile needs the le label; an aggregation that drops it
// leaves one series without buckets and the quantile is NaN.
var checkQuantileWithoutLe = Check{
	ID: "histogram/quantile-without-le", Severity: Error,
	Summary: "histogram_quantile reads buckets aggregated without `by (le)`.",
	Query: func(r *reporter, q *Query) {
		walk(q.Expr, func(n parser.Node, _ []parser.Node) {
			call, ok := n.(*parser.Call)
			if !ok || call.Func.Name != "histogram_quantile" || len(call.Args) < 2 {
				return
			}
			agg, ok := query.Unparen(call.Args[1]).(*parser.AggregateExpr)
			if !ok || agg.Op == parser.TOPK || agg.Op == parser.BOTTOMK || agg.Op == parser.LIMITK {
				return
			}
			has := slices.Contains(agg.Grouping, "le")
			if agg.Without == has && !readsNative(agg) {
				how := "by (" + strings.Join(append(slices.Clone(agg.Grouping), "le"), ", ") + ")"
				r.atNode(q, agg, "the buckets are aggregated without le, so histogram_quantile gets no buckets; aggregate %s", how)
			}
		})
	},
}

// readsNative tells whether an expression reads only series named otherwise
// than _bucket: native histograms, one series each with no le to keep.
func readsNative(e parser.Expr) bool {
	native := true
	walk(e, func(n parser.Node, _ []parser.Node) {
		if vs, ok := n.(*parser.VectorSelector); ok && (metricName(vs) == "" || strings.HasSuffix(metricName(vs), "_bucket")) {
			native = false
		}
	})
	return native
}
