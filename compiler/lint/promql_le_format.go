package lint

import (
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Prometheus 3 normalises classic histogram bounds when it scrapes them:
// le="1" is stored as le="1.0", so a matcher written "1" matches nothing.
var checkLeFormat = Check{
	ID: "promql/le-format", Severity: Error,
	Summary: "An `le` matcher is written in a form Prometheus 3 does not store (\"1\" instead of \"1.0\").",
	Query: func(r *reporter, q *Query) {
		if r.opts.Config != nil && r.opts.Config.Prometheus == 2 {
			return // Prometheus 2 keeps le as exposed
		}
		leMatchers(q.Expr, func(vs *parser.VectorSelector, m *labels.Matcher, v float64) {
			if want := labels.FormatOpenMetricsFloat(v); want != m.Value {
				r.atLabel(q, vs, "le", "Prometheus 3 stores this bucket as le=%q, so le=%q matches no series; write le=%q",
					want, m.Value, want)
			}
		})
	},
}
