package lint

import (
	"net/url"
	"strings"
)

// A runbook link that is not a URL is not clickable from the page.
var checkRunbookURL = Check{
	ID: "alert/runbook-url", Severity: Warning,
	Summary: "An alert's `runbook_url` annotation is not an absolute http(s) URL.",
	Rule: func(r *reporter, rule *Rule) {
		v, ok := rule.Annotations["runbook_url"]
		if rule.Alert == "" || !ok || strings.Contains(v, "{{") {
			return
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			r.atYAML(rule.File, rule.key("annotations", "runbook_url"), "runbook_url %q is not an absolute http(s) URL", v)
		}
	},
}
