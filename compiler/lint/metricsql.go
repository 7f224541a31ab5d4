package lint

import "github.com/VictoriaMetrics/metricsql"

// isMetricsQLFunction tells whether a function PromQL does not know is one
// of VictoriaMetrics' MetricsQL: a rule file using it is written for
// vmalert, so lint says so rather than calling it broken PromQL. The names
// come from VictoriaMetrics' own parser, so they follow its version.
func isMetricsQLFunction(name string) bool { return metricsql.IsSupportedFunction(name) }
