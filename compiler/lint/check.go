package lint

import (
	"regexp"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/parser/posrange"
	"gopkg.in/yaml.v3"
)

// Check is one lint check: a stable id (documented in docs/lint.md), its
// severity and what it looks at.
type Check struct {
	ID       string
	Severity Severity
	Summary  string
	// Query runs on every expression that parsed; Rule on every rule.
	Query func(r *reporter, q *Query)
	Rule  func(r *reporter, rule *Rule)
}

// Checks lists every check in the order they run.
func Checks() []Check {
	return []Check{
		checkSyntax, checkTooLarge, checkVariablePosition, checkNotPromQL, checkSkipped, checkRuleFormat, checkOtherRuler, checkMultiDocument, checkSpec, checkSpecWarning, checkGeneratorSpec, checkKEDAThreshold, checkKEDASeveral, checkKEDAMaySeveral,
		checkLeNotABucket, checkLeOldBucket, checkLeFormat, checkUnknownMetric, checkRenamedMetric,
		checkCounterWithoutRate, checkRateOnGauge,
		checkQuantileWithoutLe, checkQuantileOfSumCount, checkAverageLatency,
		checkRatioOfAverages, checkAverageOfRatios,
		checkBurnNeverFires, checkWindowTooShort, checkShortWindow, checkForLongerThanWindow,
		checkBurnWithoutFor, checkMissingSeverity, checkRunbookURL, checkTemplate, checkTemplateLabel, checkValueLabel,
		checkUndefinedRecordingRule,
		checkMetricsNoSeries, checkMetricsLabelValue, checkMetricsLe,
	}
}

// atNode reports at a node of the query (its first byte).
func (r *reporter) atNode(q *Query, n parser.Node, format string, args ...any) {
	r.atRange(q, n.PositionRange(), format, args...)
}

func (r *reporter) atRange(q *Query, pr posrange.PositionRange, format string, args ...any) {
	line, col := q.Pos(int(pr.Start))
	r.at(q.File, line, col, format, args...)
}

// atLabel reports at a label matcher of a selector, found in the text.
func (r *reporter) atLabel(q *Query, vs *parser.VectorSelector, label string, format string, args ...any) {
	pr := vs.PositionRange()
	start, end := int(pr.Start), int(pr.End)
	if end > len(q.Text) || start > end {
		r.atNode(q, vs, format, args...)
		return
	}
	re := regexp.MustCompile(`[{,\s]` + regexp.QuoteMeta(label) + `\s*[=!]`)
	if loc := re.FindStringIndex(q.Text[start:end]); loc != nil {
		pr.Start = posrange.Pos(start + loc[0] + 1)
	}
	r.atRange(q, pr, format, args...)
}

// atYAML reports at a YAML node.
func (r *reporter) atYAML(f *File, n *yaml.Node, format string, args ...any) {
	r.at(f, n.Line, n.Column, format, args...)
}

var checkSyntax = Check{
	ID: "promql/syntax", Severity: Error,
	Summary: "The file, a rule or a PromQL expression does not parse.",
}

var checkSkipped = Check{
	ID: "lint/skipped", Severity: Info,
	Summary: "A file lint did not read, and why: a Helm or Go template, a Loki ruler file, JSON with comments, or no input lint recognises. Its contents are never shown; `--fail-on skipped` fails the run on it.",
}

var checkTooLarge = Check{
	ID: "promql/too-large", Severity: Warning,
	Summary: "A PromQL expression is longer or nested deeper than lint parses in bounded time (16 KB, 64 levels, as for specs); it is not linted.",
}

var checkSpec = Check{
	ID: "spec/invalid", Severity: Error,
	Summary: "An inferslo or OpenSLO spec has a problem `inferslo validate` reports.",
}

var checkSpecWarning = Check{
	ID: "spec/warning", Severity: Warning,
	Summary: "An inferslo or OpenSLO spec has a warning `inferslo validate` reports.",
}

var checkVariablePosition = Check{
	ID: "dashboard/variable-position", Severity: Warning,
	Summary: "A dashboard query does not parse with its Grafana variables replaced, because a variable stands for PromQL text lint cannot guess (a list of matchers, an operator).",
}

var checkGeneratorSpec = Check{
	ID: "spec/other-generator", Severity: Info,
	Summary: "A Sloth, Pyrra or OpenSLO v1alpha spec: recognised and not linted; lint the rules its generator writes.",
}

var checkNotPromQL = Check{
	ID: "promql/not-promql", Severity: Error,
	Summary: "An expression uses a MetricsQL function: Prometheus refuses the file; it is written for VictoriaMetrics (disable the check or exclude the file for vmalert).",
}
