package lint

// Without `for`, one evaluation over the threshold pages: a scrape gap or
// a restart is enough.
var checkBurnWithoutFor = Check{
	ID: "alert/burn-without-for", Severity: Warning,
	Summary: "A burn-rate alert has no `for`.",
	Rule: func(r *reporter, rule *Rule) {
		if isBurnAlert(rule) && rule.For == 0 {
			r.atYAML(rule.File, rule.key("alert"), "burn-rate alert %s has no for: a single evaluation pages; add for (e.g. 1/12 of the short window, at least 1m)", rule.Alert)
		}
	},
}
