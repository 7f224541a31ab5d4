package lint

import (
	"strings"

	"github.com/inferslo/inferslo/spec/engine"
	"github.com/prometheus/prometheus/promql/parser"
)

// counterFuncs are the functions that make sense of a counter's raw value.
var counterFuncs = map[string]bool{
	"rate": true, "irate": true, "increase": true, "resets": true, "changes": true,
	"absent": true, "absent_over_time": true, "present_over_time": true,
	"count_over_time": true, "timestamp": true,
}

// A counter's raw value depends on when the process started; only its
// rate or increase means something.
var checkCounterWithoutRate = Check{
	ID: "promql/counter-without-rate", Severity: Warning,
	Summary: "A counter is read without rate() or increase().",
	Query: func(r *reporter, q *Query) {
		walk(q.Expr, func(n parser.Node, path []parser.Node) {
			vs, ok := n.(*parser.VectorSelector)
			if !ok || !r.isCounter(metricName(vs)) {
				return
			}
			for _, a := range path {
				switch v := a.(type) {
				case *parser.Call:
					if counterFuncs[v.Func.Name] {
						return
					}
				case *parser.AggregateExpr:
					if v.Op == parser.COUNT || v.Op == parser.GROUP || v.Op == parser.COUNT_VALUES {
						return
					}
				}
			}
			r.atNode(q, vs, "%s is a counter: read it with rate() or increase()", metricName(vs))
		})
	},
}

// isCounter says whether a series name is a counter: the catalog says so,
// or it is a histogram's _bucket/_count/_sum, or it ends in _total.
func (p *pass) isCounter(name string) bool {
	if name == "" || p.recorded[name] {
		return false
	}
	if f, ok := p.catalog.lookup(name); ok {
		return f.Kind == engine.KindCounter || f.Suffix != ""
	}
	return strings.HasSuffix(name, "_total") || strings.HasSuffix(name, "_bucket")
}
