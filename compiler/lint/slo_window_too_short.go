package lint

// A rate over fewer than four scrapes jumps with every missed or late
// scrape: burn-rate windows need at least four samples.
var checkWindowTooShort = Check{
	ID: "slo/window-too-short", Severity: Warning,
	Summary: "A burn-rate alert reads a window shorter than four scrape intervals.",
	Rule: func(r *reporter, rule *Rule) {
		if !r.isBurnAlert(rule) {
			return
		}
		min := 4 * r.opts.ScrapeInterval
		for _, w := range windows(rule.Query.Expr) {
			if w.d < min {
				r.atNode(rule.Query, w.node, "the %s window holds fewer than four scrapes at a %s scrape interval; use at least %s",
					formatDuration(w.d), formatDuration(r.opts.ScrapeInterval), formatDuration(min))
				return
			}
		}
	},
}
