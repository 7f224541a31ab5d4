package lint

import (
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/promql/parser"
)

// A mean latency hides the tail users feel: an SLI or alert on latency
// should count requests under a threshold from the buckets.
var checkAverageLatency = Check{
	ID: "slo/average-latency", Severity: Warning,
	Summary: "An alert or SLI recording rule uses average latency (_sum / _count).",
	Query: func(r *reporter, q *Query) {
		if q.Rule == nil || !(q.Rule.Alert != "" || isSLIName(q.Rule.Record)) {
			return
		}
		walk(q.Expr, func(n parser.Node, _ []parser.Node) {
			b, ok := n.(*parser.BinaryExpr)
			if !ok || b.Op != parser.DIV {
				return
			}
			for _, num := range query.Selectors(b.LHS) {
				base, ok := strings.CutSuffix(metricName(num), "_sum")
				if !ok || !strings.HasSuffix(base, "_seconds") {
					continue
				}
				for _, den := range query.Selectors(b.RHS) {
					if metricName(den) == base+"_count" {
						r.atNode(q, b, "average %s is a mean: it hides the slow tail; count requests under a threshold from %s_bucket instead", base, base)
						return
					}
				}
			}
		})
	},
}

func isSLIName(record string) bool {
	l := strings.ToLower(record)
	return strings.Contains(l, "sli") || strings.Contains(l, "slo")
}
