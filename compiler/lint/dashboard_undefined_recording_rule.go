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
			if !looksRecorded(name) || r.recorded[name] {
				continue
			}
			if _, engine := r.catalog.engineOf(name); engine {
				continue
			}
			r.atNode(q, vs, "%s looks like a recording rule, but no rule file in the lint set records it", name)
		}
	},
}

// looksRecorded says whether a name is written as a recording rule,
// level:metric:operations. A single colon (lmcache:hits) or a leading one
// (:tensorflow:serving:...) is an exporter's namespace, and so is a last
// part with a counter's or histogram's suffix (Spinnaker's
// clouddriver:controller:invocations__count_total): operations are rate5m,
// ratio, sum, not _total.
func looksRecorded(name string) bool {
	if strings.Count(name, ":") < 2 || strings.HasPrefix(name, ":") {
		return false
	}
	last := name[strings.LastIndex(name, ":")+1:]
	for _, suffix := range []string{"_total", "_count", "_bucket", "_created", "_info", "_seconds", "_bytes"} {
		if strings.HasSuffix(last, suffix) {
			return false
		}
	}
	return true
}
