package lint

// A burn alert waiting longer than its long window keeps paging on a
// window that no longer contains the burn, and pages late.
var checkForLongerThanWindow = Check{
	ID: "slo/for-longer-than-window", Severity: Warning,
	Summary: "A burn-rate alert's `for` is longer than its longest window.",
	Rule: func(r *reporter, rule *Rule) {
		if rule.For == 0 || !r.isBurnAlert(rule) {
			return
		}
		long := longest(windows(rule.Query.Expr))
		if long > 0 && rule.For > long {
			r.atYAML(rule.File, rule.key("for"), "for: %s is longer than the %s window: the burn has left the window before the alert fires",
				formatDuration(rule.For), formatDuration(long))
		}
	},
}
