package spec

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/inferslo/inferslo/compiler/model"
)

// Strings from specs reach alert labels and annotations (which Prometheus
// expands as Go templates when an alert fires), Grafana titles, queries and
// markdown (which Grafana interpolates with $variables), Kubernetes objects
// and the review page. Specs come from many authors, so these checks keep
// every such string plain text: none may become template code, a Grafana
// variable, a second YAML line or a terminal escape.

// textKind says where a string may go and so which characters it may hold.
type textKind int

const (
	// oneLine: names and titles; no control characters at all.
	oneLine textKind = iota
	// prose: descriptions; newlines and tabs allowed.
	prose
)

// grafanaVariable matches what Grafana interpolates: $name, ${name...} and
// the older [[name]]. A lone "$" (a price, a regex anchor) is left alone.
var grafanaVariable = regexp.MustCompile(`\$[A-Za-z_{]|\[\[`)

// textProblem says why s cannot reach an artifact, or "" when it can.
func textProblem(s string, kind textKind) string {
	if strings.Contains(s, "{{") || strings.Contains(s, "}}") {
		return "must not contain {{ or }}: alert annotations are Go templates that Prometheus expands when the alert fires"
	}
	// The regular expression only runs on the few strings that could match.
	if strings.ContainsAny(s, "$[") {
		if m := grafanaVariable.FindString(s); m != "" {
			return fmt.Sprintf("must not contain %q: Grafana would expand it as a dashboard variable", m)
		}
	}
	for _, r := range s {
		if kind == prose && (r == '\n' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == unicode.ReplacementChar {
			what := fmt.Sprintf("control character %U", r)
			if r == '\n' {
				what = "a line break"
			}
			if kind == prose {
				return fmt.Sprintf("must not contain %s; write plain text", what)
			}
			return fmt.Sprintf("must not contain %s; write plain text on one line", what)
		}
	}
	return ""
}

// checkText reports a string that cannot reach an artifact safely.
func checkText[T any](o object[T], ps *Problems, path, s string, kind textKind) {
	if msg := textProblem(s, kind); msg != "" {
		*ps = append(*ps, o.errorf(path, "%s", msg))
	}
}

// runbookProblem says why a runbook URL is unsafe or unusable, or "".
func runbookProblem(s string) string {
	return httpURLProblem(s, "https://runbooks.example.com/llm/chat")
}

// dashboardProblem says why a dashboard URL is unsafe or unusable, or "".
func dashboardProblem(s string) string {
	return httpURLProblem(s, "https://grafana.example.com/d/inferslo-chat")
}

// severityProblem says why an alert severity cannot be a label value
// spelled into annotations, or "". page and ticket are the known tiers;
// any other value must be a short identifier.
func severityProblem(s string) string {
	if s == model.PageTier || s == model.TicketTier {
		return ""
	}
	if !severityPattern.MatchString(s) {
		return fmt.Sprintf("%q is not a severity: use page or ticket, or a name of letters, digits, '_' and '-' (at most 63)", s)
	}
	return ""
}

var severityPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,62}$`)

// dnsLabelProblem says why a name that becomes a label value, rule group,
// file name and dashboard uid is not a DNS label, or "".
func dnsLabelProblem(s string) string {
	if isDNSLabel(s) {
		return ""
	}
	return fmt.Sprintf("%q is not a DNS label (lower-case letters, digits and '-', at most 63)", s)
}
