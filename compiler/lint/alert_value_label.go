package lint

import (
	"maps"
	"regexp"
	"slices"
)

// An alert's labels are its identity: a label that renders the value gives
// each evaluation a new alert, so the pending one is dropped before its
// for: elapses, and without for: every change of value resolves one alert
// and fires another.
var checkValueLabel = Check{
	ID: "alert/value-label", Severity: Error,
	Summary: "An alert label renders the query's value (`$value`, `.Value`): the alert's identity changes with every evaluation, so with `for:` it never fires.",
	Rule: func(r *reporter, rule *Rule) {
		if rule.Alert == "" {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(rule.Labels)) {
			if readsValue.MatchString(rule.Labels[k]) {
				r.atYAML(rule.File, rule.key("labels", k), "label %s of alert %s renders the value: each evaluation makes a new alert, so it never stays pending for its for: and flaps without one; put the value in an annotation", k, rule.Alert)
			}
		}
	},
}

// readsValue finds a template action that reads the alert's value.
var readsValue = regexp.MustCompile(`\{\{[^}]*(\$value\b|\.Value\b)`)
