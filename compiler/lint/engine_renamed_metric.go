package lint

import "github.com/inferslo/inferslo/compiler/query"

// A metric an engine renamed or removed reads nothing on the releases
// after the change; the catalog records the replacement.
var checkRenamedMetric = Check{
	ID: "engine/renamed-metric", Severity: Error,
	Summary: "A metric an engine renamed or removed; the current name is suggested.",
	Query: func(r *reporter, q *Query) {
		for _, vs := range query.Selectors(q.Expr) {
			facts, ok := r.catalog.lookup(metricName(vs))
			if !ok || (facts.ReplacedBy == "" && facts.Removed == "") || r.catalog.pinned[facts.Family] {
				continue
			}
			var msg string
			switch {
			case facts.Removed != "" && facts.ReplacedBy != "":
				msg = facts.Family + " was replaced by " + facts.ReplacedBy + facts.Suffix
				if facts.Since != "" {
					msg += " in " + facts.Engine + " " + facts.Since
				}
				msg += " and removed in " + facts.Removed
			case facts.ReplacedBy != "":
				msg = facts.Family + " was replaced by " + facts.ReplacedBy + facts.Suffix
				if facts.Since != "" {
					msg += " in " + facts.Engine + " " + facts.Since
				}
			default:
				msg = facts.Family + " was removed in " + facts.Engine + " " + facts.Removed
			}
			if facts.Note != "" {
				msg += " (" + facts.Note + ")"
			}
			if facts.ReplacedBy != "" {
				msg += "; use " + facts.ReplacedBy + facts.Suffix
			}
			r.atNode(q, vs, "%s", msg)
		}
	},
}
