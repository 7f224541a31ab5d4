package lint

// Without `for`, one evaluation over the threshold pages: a scrape gap or
// a restart is enough. A multiwindow alert is exempt: its short window
// already makes it need a sustained burn and resets it. So is inferslo's
// outage tier (burn_tier="outage"): it needs nine in ten requests failing
// over a window of at least four scrapes and ten requests, which no scrape
// gap or restart produces, and a `for` would add an evaluation interval to
// the two minutes it takes to page on a total outage.
var checkBurnWithoutFor = Check{
	ID: "alert/burn-without-for", Severity: Warning,
	Summary: "A single-window burn-rate alert has no `for`.",
	Rule: func(r *reporter, rule *Rule) {
		if rule.For == 0 && r.isBurnAlert(rule) && !r.isMultiwindow(rule) && rule.Labels["burn_tier"] != "outage" {
			r.atYAML(rule.File, rule.key("alert"), "burn-rate alert %s has no for and a single window: a single evaluation pages; add for (e.g. 1/12 of the window, at least 1m) or a short window", rule.Alert)
		}
	},
}
