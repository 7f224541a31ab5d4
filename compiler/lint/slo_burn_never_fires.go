package lint

import "github.com/prometheus/prometheus/promql/parser"

// An error ratio cannot exceed 1: a burn threshold that needs a larger
// ratio is never crossed, so the alert never fires.
var checkBurnNeverFires = Check{
	ID: "slo/burn-never-fires", Severity: Error,
	Summary: "A burn-rate threshold × (1 − objective) is 1 or more (scaling such as × 100 accounted for): the error ratio can never reach it.",
	Rule: func(r *reporter, rule *Rule) {
		for _, c := range r.burnConditions(rule) {
			// ratio >= 1 can hold (every request failed); ratio > 1 cannot.
			if c.limit < 1 || c.limit == 1 && c.cmp.Op == parser.GTE {
				continue
			}
			q := rule.Query
			switch {
			case c.burnRate:
				r.atNode(q, c.cmp.RHS, "the error ratio / %s is compared with %s: that needs an error ratio of %s, and it never exceeds 1, so this alert can never fire; the burn factor must stay below %s",
					formatFloat(c.budget), c.cmp.RHS.String(), formatFloat(c.limit), formatFloat(1/c.budget))
			case c.objective > 0:
				r.atNode(q, c.cmp.RHS, "%s × (1 − %s) needs an error ratio of %s: it never exceeds 1, so this alert can never fire; the burn factor must stay below %s",
					formatFloat(c.factor), formatFloat(c.objective), formatFloat(c.limit), formatFloat(1/(1-c.objective)))
			default:
				r.atNode(q, c.cmp.RHS, "the threshold %s needs an error ratio of %s: it never exceeds 1, so this alert can never fire", c.cmp.RHS.String(), formatFloat(c.limit))
			}
		}
	},
}
