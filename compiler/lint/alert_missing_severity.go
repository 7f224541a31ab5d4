package lint

// Alertmanager routes on severity: an alert without it goes to the
// default receiver, or nowhere.
var checkMissingSeverity = Check{
	ID: "alert/missing-severity", Severity: Warning,
	Summary: "An alerting rule has no `severity` label.",
	Rule: func(r *reporter, rule *Rule) {
		if rule.Alert != "" && rule.Labels["severity"] == "" {
			r.atYAML(rule.File, rule.key("alert"), "alert %s has no severity label; routing cannot tell a page from a ticket", rule.Alert)
		}
	},
}
