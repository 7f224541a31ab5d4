package lint

import "github.com/inferslo/inferslo/compiler/query"

// A name in an engine's namespace that the catalog does not know is
// usually a typo or a metric of another version.
var checkUnknownMetric = Check{
	ID: "engine/unknown-metric", Severity: Warning,
	Summary: "A metric in an engine's namespace (vllm:, sglang: ...) is not in the engine catalog.",
	Query: func(r *reporter, q *Query) {
		for _, vs := range query.Selectors(q.Expr) {
			name := metricName(vs)
			id, ok := r.catalog.engineOf(name)
			if !ok || r.recorded[name] {
				continue
			}
			if _, known := r.catalog.lookup(name); known {
				continue
			}
			msg := "%s is not a metric the engine catalog knows for %s"
			args := []any{name, id}
			if s := closest(name, r.catalog.names(id)); s != "" {
				msg += "; did you mean %s?"
				args = append(args, s)
			}
			r.atNode(q, vs, msg, args...)
		}
	},
}

// closest returns the candidate nearest to name by edit distance, when it
// is near enough to be a plausible meaning.
func closest(name string, candidates []string) string {
	best, bestD := "", len(name)/2+1
	for _, c := range candidates {
		if d := query.EditDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
