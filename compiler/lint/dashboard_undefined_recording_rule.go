package lint

import (
	"strings"

	"github.com/inferslo/inferslo/compiler/query"
)

// A panel reading a recording rule that nothing records stays empty.
var checkUndefinedRecordingRule = Check{
	ID: "dashboard/undefined-recording-rule", Severity: Warning,
	Summary: "A dashboard query reads a recording rule that no rule file in the lint set defines.",
	Query: func(r *reporter, q *Query) {
		if q.File.Kind != KindDashboard {
			return
		}
		for _, vs := range query.Selectors(q.Expr) {
			name := metricName(vs)
			// Recording rules are named level:metric:operations; a single
			// colon (lmcache:hits) or a leading one (:tensorflow:serving:...)
			// is an exporter's namespace.
			if strings.Count(name, ":") < 2 || strings.HasPrefix(name, ":") || r.recorded[name] {
				continue
			}
			if _, engine := r.catalog.engineOf(name); engine {
				continue
			}
			r.atNode(q, vs, "%s looks like a recording rule, but no rule file in the lint set records it", name)
		}
	},
}
