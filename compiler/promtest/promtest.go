// Package promtest writes promtool unit-test files (`promtool test rules`)
// for the generated rules: for every alert tier of every SLO, a burn that
// must page (or ticket) and half the budget rate that must stay silent.
//
// Inputs are the engine-shaped counters of package simulate, for one pod,
// growing linearly from zero: every window then sees the same burn rate, so
// which alerts fire at the evaluation time follows from the spec alone, and
// expected annotations are the rule's own templates expanded with that
// burn rate.
package promtest

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
)

// Path is where a service's test file goes, beside its rule file.
func Path(service string) string { return "prometheus/" + service + ".test.yaml" }

// File is a promtool unit-test file.
type File struct {
	RuleFiles          []string `yaml:"rule_files"`
	EvaluationInterval string   `yaml:"evaluation_interval"`
	Tests              []Test   `yaml:"tests"`
}

// Test is one promtool test group.
type Test struct {
	Name     string `yaml:"name"`
	Interval string `yaml:"interval"`
	// StartTimestamp, RFC 3339, moves a test of a service with
	// maintenance windows to hours when every window is closed; promtool
	// starts at the Unix epoch otherwise.
	StartTimestamp string       `yaml:"start_timestamp,omitempty"`
	InputSeries    []Series     `yaml:"input_series"`
	Alerts         []AlertTest  `yaml:"alert_rule_test,omitempty"`
	PromQLTests    []PromQLTest `yaml:"promql_expr_test,omitempty"`
}

// Series is one input series in promtool's expanding notation.
type Series struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

// AlertTest lists the alerts of one name firing at one time.
type AlertTest struct {
	EvalTime  string          `yaml:"eval_time"`
	Alertname string          `yaml:"alertname"`
	ExpAlerts []ExpectedAlert `yaml:"exp_alerts"`
}

// ExpectedAlert is one firing alert.
type ExpectedAlert struct {
	Labels      map[string]string `yaml:"exp_labels"`
	Annotations map[string]string `yaml:"exp_annotations,omitempty"`
}

// Files returns one test file per service of set, testing the service's
// rule groups as rules.Services built them (a compilation shares them with
// the rule files).
func Files(set model.Set, services []rules.Service) (artifact.Set, error) {
	groups := make(map[string][]rulefmt.RuleGroup, len(services))
	for _, s := range services {
		groups[s.Name] = s.Groups
	}
	var files artifact.Set
	for _, svc := range set.PerService() {
		service := svc.Name
		f, err := ServiceTests(svc, groups[service])
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", service, err)
		}
		if len(f.Tests) == 0 {
			continue
		}
		if err := checkSeries(f); err != nil {
			return nil, fmt.Errorf("service %s: %w", service, err)
		}
		var buf bytes.Buffer
		var sources []string
		seen := map[string]bool{}
		for _, slo := range svc.SLOs {
			if !seen[slo.Source] {
				seen[slo.Source] = true
				sources = append(sources, slo.Source)
			}
		}
		buf.WriteString(artifact.YAMLHeader(sources))
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(f); err != nil {
			return nil, fmt.Errorf("service %s: encode tests: %w", service, err)
		}
		files = append(files, artifact.File{Path: Path(service), Data: buf.Bytes()})
	}
	return files, nil
}

// checkSeries checks the series notation of every input series.
func checkSeries(f File) error {
	p := query.NewParser()
	for _, t := range f.Tests {
		for _, s := range t.InputSeries {
			if _, _, err := p.ParseSeriesDesc(s.Series + " " + s.Values); err != nil {
				return fmt.Errorf("test %q: series %s: %w", t.Name, s.Series, err)
			}
		}
	}
	return nil
}

// ServiceTests builds the tests of one service from its rule groups, whose
// alert annotations the expected alerts expand.
func ServiceTests(svc model.ServiceSLOs, groups []rulefmt.RuleGroup) (File, error) {
	service, slos := svc.Name, svc.SLOs
	f := File{RuleFiles: []string{strings.TrimPrefix(rules.Path(service), "prometheus/")}}
	eval := time.Duration(0)
	for _, slo := range slos {
		if e := slo.Evaluation; e > 0 && (eval == 0 || e < eval) {
			eval = e
		}
	}
	eval = cmp.Or(eval, time.Minute)
	f.EvaluationInterval = model.FormatDuration(eval)
	b := builder{slos: slos, groups: groups, eval: eval}
	for _, slo := range slos {
		if !countable(slo) {
			continue
		}
		for _, tier := range slo.Alerting.Tiers {
			burn, ok := tierBurn(slo, tier)
			if !ok {
				continue
			}
			name := fmt.Sprintf("%s: the %s alert fires during a %sx burn%s", slo.Name, tier.Severity, trim(burn), groupsNote(slo))
			if ts := slo.Timeslices; ts != nil && !ts.Average {
				// Constant errors make every slice alike: an error ratio
				// halfway between what a slice may hold and 1 makes all bad.
				burn = (2 - ts.Target.Float()) / 2 / slo.ErrorBudget().Float()
				name = fmt.Sprintf("%s: the %s alert fires when every %s slice is bad%s", slo.Name, tier.Severity, model.FormatDuration(ts.Window), groupsNote(slo))
			}
			for _, c := range []struct {
				name string
				burn float64
			}{
				{name, burn},
				{fmt.Sprintf("%s: the %s alert is silent at half the budget rate", slo.Name, tier.Severity), 0.5},
			} {
				t, err := b.test(slo, c.name, c.burn)
				if err != nil {
					return File{}, fmt.Errorf("slo %s: %w", slo.Name, err)
				}
				f.Tests = append(f.Tests, t)
			}
		}
		if burn, ok := pagelessBurn(slo); ok && (slo.Timeslices == nil || slo.Timeslices.Average) {
			t, err := b.test(slo, fmt.Sprintf("%s: a %sx burn raises the ticket and nothing pages (no page tier)%s", slo.Name, trim(burn), groupsNote(slo)), burn)
			if err != nil {
				return File{}, fmt.Errorf("slo %s: %w", slo.Name, err)
			}
			f.Tests = append(f.Tests, t)
		}
		signals, err := b.signalTests(slo)
		if err != nil {
			return File{}, fmt.Errorf("slo %s: %w", slo.Name, err)
		}
		f.Tests = append(f.Tests, signals...)
		if len(slo.SLI.ThresholdBuckets()) > 0 && len(slo.Alerting.Tiers) > 0 {
			t, err := b.missingBucket(slo)
			if err != nil {
				return File{}, fmt.Errorf("slo %s: %w", slo.Name, err)
			}
			f.Tests = append(f.Tests, t)
		}
	}
	goodput, err := b.goodputTests()
	if err != nil {
		return File{}, err
	}
	f.Tests = append(f.Tests, goodput...)
	if start, ok := clearStart(slos); !ok {
		return File{}, fmt.Errorf("service %s: its maintenance windows leave no %s closed within a week to test its alerts in", service, model.FormatDuration(testSpan))
	} else if start != "" {
		for i := range f.Tests {
			f.Tests[i].StartTimestamp = start
		}
	}
	return f, nil
}

// testSpan bounds how long a generated test runs, its rates' history
// included.
const testSpan = 6 * time.Hour

// clearStart is the first quarter hour from the Unix epoch (where promtool
// starts) at which the service's maintenance windows stay closed for
// testSpan: a window open during a test would leave its burn out. "" when
// the service has no windows.
func clearStart(slos []model.SLO) (string, bool) {
	var ms []model.Maintenance
	for _, s := range slos {
		ms = append(ms, s.Alerting.Maintenance...)
	}
	if len(ms) == 0 {
		return "", true
	}
	for at := time.Unix(0, 0).UTC(); at.Before(time.Unix(0, 0).Add(7 * 24 * time.Hour)); at = at.Add(15 * time.Minute) {
		if model.Closed(ms, at, at.Add(testSpan)) {
			return at.Format(time.RFC3339), true
		}
	}
	return "", false
}

// tierBurn is the burn that must fire a tier: 20x for a page when that is
// above every page factor (the classic fast burn), otherwise twice the
// tier's largest factor; for a ticket, between its largest factor and the
// page tier's smallest, so the page stays out of it. The burn keeps the
// error ratio at most 100%.
func tierBurn(slo model.SLO, tier model.Tier) (float64, bool) {
	maxF, minPage := maxFactor(tier), math.Inf(1)
	for _, t := range slo.Alerting.Tiers {
		if t.Severity == model.PageTier {
			for _, p := range t.Windows {
				minPage = math.Min(minPage, p.Factor.Float())
			}
		}
	}
	limit := 1 / slo.ErrorBudget().Float()
	var b float64
	switch {
	case tier.Severity == model.PageTier && maxF < 20:
		b = 20
	case tier.Severity == model.PageTier:
		b = 2 * maxF
	case minPage > maxF && !math.IsInf(minPage, 1):
		b = math.Round(10*math.Sqrt(maxF*minPage)) / 10
	default:
		b = 2 * maxF
	}
	if b >= limit {
		b = math.Floor(10*(maxF+limit)/2) / 10
	}
	return b, b > maxF && b < limit
}

// pagelessBurn is the fast burn that pages an SLO with the default tiers
// (20x), for an SLO with a ticket tier and no page tier (the batch tier):
// its test expects the ticket alone, so a page rule in the file fails it.
// False when the SLO pages, has no ticket, or 20x is out of reach.
func pagelessBurn(slo model.SLO) (float64, bool) {
	var ticket *model.Tier
	for i, t := range slo.Alerting.Tiers {
		switch t.Severity {
		case model.PageTier:
			return 0, false
		case model.TicketTier:
			ticket = &slo.Alerting.Tiers[i]
		}
	}
	if ticket == nil {
		return 0, false
	}
	const fast = 20
	return fast, fast > maxFactor(*ticket) && fast < 1/slo.ErrorBudget().Float()
}

// maxFactor is a tier's largest burn factor.
func maxFactor(t model.Tier) float64 {
	out := 0.0
	for _, p := range t.Windows {
		out = math.Max(out, p.Factor.Float())
	}
	return out
}

func trim(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// groupsNote tells, in a test's name, that a grouped SLO burns in one group.
func groupsNote(slo model.SLO) string {
	if len(slo.GroupBy) == 0 {
		return ""
	}
	return fmt.Sprintf(" of %s %s and stays silent for %s", strings.Join(slo.GroupBy, ","), groupValue(slo, 0), groupValue(slo, 1))
}

// groupValue is the value of every grouping label in the i-th group of a
// test: the first burns, the second runs at half the budget rate.
func groupValue(slo model.SLO, i int) string { return fmt.Sprintf("%s-%c", slo.Name, 'a'+i) }

// grouped copies the counters into two groups of a grouped SLO, the second
// at half the budget rate. A selector that fixes a grouping label to one
// value leaves one group: the copies would not be selected.
func grouped(slo model.SLO, counters []synth.Counter, perScrape, bad float64) ([]synth.Input, error) {
	halfBad := math.Round(perScrape * slo.ErrorBudget().Float() * 0.5)
	var inputs []synth.Input
	for i, badPerScrape := range []float64{bad, halfBad} {
		var group []synth.Input
		for _, c := range counters {
			lb := labels.NewBuilder(c.Labels)
			for _, l := range slo.GroupBy {
				lb.Set(l, groupValue(slo, i))
			}
			c.Labels = lb.Labels()
			group = append(group, synth.Input{Counter: c, N: perScrape, K: badPerScrape})
		}
		total, _, err := synth.Events(slo, group)
		if err != nil {
			return nil, err
		}
		if total <= 0 {
			break
		}
		inputs = append(inputs, group...)
	}
	if len(inputs) == 0 {
		inputs = ungrouped(counters, perScrape, bad)
	}
	return inputs, nil
}

// ungrouped drives every counter with the same requests and bad requests.
func ungrouped(counters []synth.Counter, perScrape, bad float64) []synth.Input {
	var out []synth.Input
	for _, c := range counters {
		out = append(out, synth.Input{Counter: c, N: perScrape, K: bad})
	}
	return out
}

// values is an input's samples in promtool's expanding notation: from zero,
// growing by the same increment every scrape.
func values(in synth.Input, steps int) string {
	if !in.Counter.Native() {
		return fmt.Sprintf("0+%sx%d", trim(in.Counter.Value(in.N, in.K)), steps)
	}
	inc := in.Counter.Histogram(in.N, in.K)
	zero := inc.Copy()
	zero.Count, zero.Sum = 0, 0
	for i := range zero.PositiveBuckets {
		zero.PositiveBuckets[i] = 0
	}
	return fmt.Sprintf("%s+%sx%d", histogramNotation(zero), histogramNotation(inc), steps)
}

// histogramNotation prints a native histogram of one positive span the way
// promtool's series notation reads it: absolute bucket counts from offset.
func histogramNotation(h *histogram.Histogram) string {
	var counts []string
	abs := int64(0)
	for _, d := range h.PositiveBuckets {
		abs += d
		counts = append(counts, strconv.FormatInt(abs, 10))
	}
	return fmt.Sprintf("{{schema:%d count:%d sum:%s offset:%d buckets:[%s]}}",
		h.Schema, h.Count, trim(h.Sum), h.PositiveSpans[0].Offset, strings.Join(counts, " "))
}

// labelsOf lists the inputs' series.
func labelsOf(inputs []synth.Input) []labels.Labels {
	out := make([]labels.Labels, len(inputs))
	for i, in := range inputs {
		out[i] = in.Counter.Labels
	}
	return out
}

type builder struct {
	slos   []model.SLO
	groups []rulefmt.RuleGroup
	eval   time.Duration
}

// test builds one test group: the SLO's counters at the given burn, and the
// ErrorBudgetBurn alerts of every SLO of the service expected to fire.
func (b builder) test(slo model.SLO, name string, burn float64) (Test, error) {
	counters, err := synth.Counters(slo)
	if err != nil {
		return Test{}, err
	}
	scrape := slo.Scrape()
	// Requests per scrape such that a burn of 1 is 100 bad requests: burn
	// rates then print exactly in the annotations.
	perScrape := math.Ceil(100 / slo.ErrorBudget().Float())
	if min := slo.Alerting.MinEventsPerSecond.Float() * scrape.Seconds() * 2; perScrape < min {
		perScrape = math.Ceil(min)
	}
	bad := math.Round(perScrape * slo.ErrorBudget().Float() * burn)
	evalAt := b.evalTime()
	steps := int((evalAt+b.eval)/scrape) + 1
	t := Test{Name: name, Interval: model.FormatDuration(scrape)}
	inputs := ungrouped(counters, perScrape, bad)
	if len(slo.GroupBy) > 0 {
		if inputs, err = grouped(slo, counters, perScrape, bad); err != nil {
			return Test{}, err
		}
	}
	for _, in := range inputs {
		t.InputSeries = append(t.InputSeries, Series{Series: seriesName(in.Counter.Labels), Values: values(in, steps)})
	}
	exp, err := b.expected(inputs, scrape, evalAt)
	if err != nil {
		return Test{}, err
	}
	t.Alerts = []AlertTest{{EvalTime: model.FormatDuration(evalAt), Alertname: model.AlertBurn, ExpAlerts: exp}}
	return t, nil
}

// evalTime is late enough for every alert whose condition holds from the
// start to have fired: the longest `for` of the service plus five
// evaluations for the base rate windows to fill.
func (b builder) evalTime() time.Duration {
	var longest time.Duration
	for _, slo := range b.slos {
		for _, t := range slo.Alerting.Tiers {
			if t.For > longest {
				longest = t.For
			}
		}
	}
	d := longest + 5*b.eval
	return d.Truncate(b.eval) + b.eval
}

// bucketMissing tells whether a threshold bucket the SLO reads has no input
// series while its events do: SLIMisconfigured then holds its burn alerts.
func bucketMissing(slo model.SLO, series []labels.Labels) bool {
	p := query.NewParser()
	for _, sel := range slo.SLI.ThresholdBuckets() {
		ms, err := p.ParseMetricSelector(sel)
		if err != nil {
			continue
		}
		matchesAll := func(ls labels.Labels) bool {
			return !slices.ContainsFunc(ms, func(m *labels.Matcher) bool { return !m.Matches(ls.Get(m.Name)) })
		}
		if !slices.ContainsFunc(series, matchesAll) {
			return true
		}
	}
	return false
}

// countable tells whether the tests can drive an SLO's burn with event
// counts: not a raw ratio or a threshold value, which have none. A ratio
// budgeted in time slices can, since constant errors give every slice the
// same ratio.
func countable(slo model.SLO) bool { return slo.SLI.Raw == nil && slo.SLI.Threshold == nil }
