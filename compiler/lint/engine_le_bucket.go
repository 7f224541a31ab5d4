package lint

import (
	"math"
	"strconv"

	"github.com/inferslo/inferslo/spec/engine"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// An le that is not one of the engine's buckets matches no series: the
// SLI is empty and the alert reads nothing (or always fires).
var checkLeNotABucket = Check{
	ID: "engine/le-not-a-bucket", Severity: Error,
	Summary: "A known engine histogram is read at an `le` that is not one of its buckets.",
	Query: func(r *reporter, q *Query) {
		leMatchers(q.Expr, func(vs *parser.VectorSelector, m *labels.Matcher, v float64) {
			facts, ok := r.catalog.lookup(metricName(vs))
			if !ok || facts.Kind != engine.KindHistogram || facts.Suffix != "_bucket" || len(facts.Buckets) == 0 || math.IsInf(v, 0) || r.catalog.isBucket(facts, v) {
				return
			}
			if change, ok := r.catalog.olderBucket(facts, v); ok {
				r.with(checkLeOldBucket).atLabel(q, vs, "le", "le=%q is a bucket of %s only on older releases (%s): on current ones %s, and the selector matches no series",
					m.Value, facts.Family, change, neighbours(facts.Buckets, v))
				return
			}
			r.atLabel(q, vs, "le", "%s has no bucket le=%q: %s; the selector matches no series",
				facts.Family, m.Value, neighbours(facts.Buckets, v))
		})
	},
}

// An le that only an older release has is right on that release only.
var checkLeOldBucket = Check{
	ID: "engine/le-old-bucket", Severity: Warning,
	Summary: "A known engine histogram is read at an `le` that only an older release of the engine has.",
}

// hasBucket says whether v is one of the bounds, compared as the engine
// catalog compares them.
func hasBucket(buckets []float64, v float64) bool {
	_, ok := (&engine.Histogram{Buckets: buckets}).Bucket(v)
	return ok
}

// neighbours names the buckets either side of v, in the form Prometheus 3
// stores them.
func neighbours(buckets []float64, v float64) string {
	below, above := (&engine.Histogram{Buckets: buckets}).Neighbours(v)
	q := func(f float64) string { return strconv.Quote(labels.FormatOpenMetricsFloat(f)) }
	switch {
	case math.IsNaN(below):
		return "the lowest bucket is le=" + q(above)
	case math.IsNaN(above):
		return "the highest bucket is le=" + q(below)
	}
	return "the neighbours are le=" + q(below) + " and le=" + q(above)
}
