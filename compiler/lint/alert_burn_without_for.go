package lint

// Without `for`, one evaluation over the threshold pages: a scrape gap or
// a restart is enough. A multiwindow alert is exempt: its short window
// already makes it need a sustained burn and resets it.
var checkBurnWithoutFor = Check{
	ID: "alert/burn-without-for", Severity: Warning,
	Summary: "A single-window burn-rate alert has no `for`.",
	Rule: func(r *reporter, rule *Rule) {
		if rule.For == 0 && r.isBurnAlert(rule) && !r.isMultiwindow(rule) {
			r.atYAML(rule.File, rule.key("alert"), "burn-rate alert %s has no for and a single window: a single evaluation pages; add for (e.g. 1/12 of the window, at least 1m) or a short window", rule.Alert)
		}
	},
}
