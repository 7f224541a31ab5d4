// Package rules is the Prometheus backend: recording rules and
// multi-window, multi-burn-rate alerts for each SLO.
//
// Only the base rules read raw series, over the SLO's shortest window. Every
// longer window, up to the whole SLO window, averages those recordings, as a
// sum and a count of them built from the sums of a shorter window read at
// offsets (windows.go), so a 28d SLI costs a few recorded samples per
// evaluation instead of a rescan of raw histograms or of 40,320 recordings.
// Events and bad events are recorded separately and divided last: the error
// ratio of any window is a ratio of event counts, so a busy hour weighs more
// than a quiet one.
package rules

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/templates"
)

// Path is where a service's rule file goes in the output folder.
func Path(service string) string { return "prometheus/" + service + ".rules.yaml" }

// Service is the validated rule groups of one service and the spec files
// they came from. Rule files, PrometheusRule objects and ruler files all
// encode the same groups.
type Service struct {
	Name    string
	Groups  []rulefmt.RuleGroup
	Sources []string
	// checked is set by Services, which validated the groups.
	checked bool
	// file is the rule file, encoded once by Services; body is its
	// groups, which every artifact that carries them reuses.
	file, body []byte
}

// AppendEncoded appends the groups to b as AppendGroups writes them. The
// rule file's encoding is reused, indented, wherever the style would not
// change it: most of a compilation's output is the same groups written
// three times, each copied once into the file that holds it.
func (s Service) AppendEncoded(b []byte, indent int, style GroupStyle) []byte {
	if !s.reusable(style) {
		return AppendGroups(b, indent, s.Groups, style)
	}
	return appendIndented(b, s.body, strings.Repeat(" ", indent))
}

// reusable says whether the groups written in style read as the body
// Services encoded.
func (s Service) reusable(style GroupStyle) bool {
	ok := s.body != nil && style.PartialResponseStrategy == ""
	for _, g := range s.Groups {
		ok = ok && (len(g.Labels) == 0 || !style.LabelsBeforeRules)
	}
	return ok
}

// File is the service's rule file with its groups written in style: the
// file Services encoded, shared and not copied, when the style would not
// change it. Its bytes must not be changed.
func (s Service) File(style GroupStyle) []byte {
	if s.file != nil && s.reusable(style) {
		return s.file[:len(s.file):len(s.file)]
	}
	return s.AppendEncoded([]byte(artifact.YAMLHeader(s.Sources)), 0, style)
}

// Check validates the groups unless Services already did; groups must not
// change after Services returned them.
func (s Service) Check() error {
	if s.checked {
		return nil
	}
	return Validate(s.Groups)
}

// Validator checks generated rule groups. One Validator serves all the
// services a compilation worker validates: it parses each expression shape
// and each alert template text once, however many services repeat them.
type Validator struct {
	exprs *query.ShapeParser
	// rules are the shapes of rules (labels and annotations aside) that
	// rulefmt validated: the same record or alert over the same shape of
	// expression validates the same.
	rules map[ruleShape]bool
	// texts are the alert template texts that parsed.
	texts map[string]bool
	// said words the alerts' window pairs.
	said windowWords
}

// NewValidator returns a Validator that has seen nothing yet.
func NewValidator() *Validator {
	return &Validator{exprs: query.NewShapeParser(), rules: map[ruleShape]bool{}, texts: map[string]bool{}, said: windowWords{}}
}

// ruleShape is what rulefmt's Rule.Validate reads of a rule without labels
// and annotations, the expression by its shape.
type ruleShape struct {
	record, alert, expr string
	dur, keep           prommodel.Duration
}

// Services builds and validates every service's rule groups, once; see
// (*Validator).Services.
func Services(set model.Set, text *templates.Text) ([]Service, error) {
	return NewValidator().Services(set, text)
}

// Services builds and validates every service's rule groups, once. The
// alert templates of all services are parsed together. Annotations are
// worded by text, or by the built-in templates when text is nil.
func (v *Validator) Services(set model.Set, text *templates.Text) ([]Service, error) {
	text, err := templates.OrDefault(text)
	if err != nil {
		return nil, err
	}
	var out []Service
	var alerts []rulefmt.Rule
	for _, service := range set.PerService() {
		groups, sources, err := serviceGroups(service.SLOs, text, v.said)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", service.Name, err)
		}
		msgs, a := v.validate(groups)
		if err := problems(msgs); err != nil {
			return nil, fmt.Errorf("service %s: %w", service.Name, err)
		}
		alerts = append(alerts, a...)
		header := artifact.YAMLHeader(sources)
		file := AppendGroups(append(make([]byte, 0, len(header)+sizeHint(groups)), header...), 0, groups, GroupStyle{})
		out = append(out, Service{Name: service.Name, Groups: groups, Sources: sources, checked: true,
			file: file, body: file[len(header):]})
	}
	if err := problems(v.templateProblems(alerts)); err != nil {
		return nil, err
	}
	return out, nil
}

// Build returns one validated rule file per service; see Services for text.
func Build(set model.Set, text *templates.Text) (artifact.Set, error) {
	services, err := Services(set, text)
	if err != nil {
		return nil, err
	}
	return Files(services), nil
}

// Files encodes validated services as rule files.
func Files(services []Service) artifact.Set {
	files := make(artifact.Set, 0, len(services))
	for _, s := range services {
		files = append(files, artifact.File{Path: Path(s.Name), Data: s.File(GroupStyle{})})
	}
	return files
}

func serviceGroups(slos []model.SLO, text *templates.Text, said windowWords) ([]rulefmt.RuleGroup, []string, error) {
	text, err := templates.OrDefault(text)
	if err != nil {
		return nil, nil, err
	}
	var groups []rulefmt.RuleGroup
	goodput := goodputRules(slos)
	for _, slo := range slos {
		g, err := group(slo, text, said)
		if err != nil {
			return nil, nil, fmt.Errorf("slo %s: %w", slo.Name, err)
		}
		g.Rules = append(g.Rules, goodput[slo.Name]...)
		groups = append(groups, g)
	}
	return groups, model.Sources(slos), nil
}

// GroupName is the rule group of one SLO; a named tier prefixes it
// (batch-inferslo-<slo>), so rule listings sort batch groups together, and a
// prefix before inferslo- never equals another SLO's group name.
func GroupName(slo model.SLO) string {
	if slo.SLOTier != "" {
		return slo.SLOTier + "-inferslo-" + slo.Name
	}
	return "inferslo-" + slo.Name
}

// Group returns the rules of one SLO in evaluation order: base rates, window
// rates, ratios, burn rates, budget, metadata, then alerts. One group, so each
// rule reads the ones before it from the same evaluation. Annotations are
// worded by text, or by the built-in templates when text is nil.
func Group(slo model.SLO, text *templates.Text) (rulefmt.RuleGroup, error) {
	return group(slo, text, nil)
}

// group is Group, the alerts' window pairs worded as said remembers them.
func group(slo model.SLO, text *templates.Text, said windowWords) (rulefmt.RuleGroup, error) {
	text, err := templates.OrDefault(text)
	if err != nil {
		return rulefmt.RuleGroup{}, err
	}
	b := builder{slo: slo, base: slo.BaseWindow(), text: text, said: said, rules: make([]rulefmt.Rule, 0, rulesHint)}
	b.maintenance()
	if err := b.recordings(); err != nil {
		return rulefmt.RuleGroup{}, err
	}
	if err := b.outageRecordings(); err != nil {
		return rulefmt.RuleGroup{}, err
	}
	if err := b.shedding(); err != nil {
		return rulefmt.RuleGroup{}, err
	}
	b.metadata()
	if err := b.alerts(); err != nil {
		return rulefmt.RuleGroup{}, err
	}
	return rulefmt.RuleGroup{
		Name:     GroupName(slo),
		Interval: prommodel.Duration(slo.Evaluation),
		Rules:    b.rules,
	}, nil
}

// rulesHint is room for the rules of most SLOs' groups (about 50 with
// every alert tier), so the group's slice is allocated once.
const rulesHint = 64

type builder struct {
	slo   model.SLO
	base  time.Duration
	text  *templates.Text
	said  windowWords
	rules []rulefmt.Rule
	// matchers are the selectors' braces by window, as model.Selector
	// writes them: a group selects its recordings a hundred times over a
	// few windows.
	matchers map[time.Duration]string
	// ids are the identity labels by window, each call handed a copy.
	ids map[time.Duration]map[string]string
}

func (b *builder) sel(name string, window time.Duration) string {
	m, ok := b.matchers[window]
	if !ok {
		if b.matchers == nil {
			b.matchers = map[time.Duration]string{}
		}
		m = model.Selector("", b.slo, window)
		b.matchers[window] = m
	}
	return name + m
}

// identity labels every recording: derived rules would inherit the labels
// from the series they read, but spelling them out keeps each rule unique
// within its file (promtool's duplicate-rules lint compares rule labels).
// The rules of a window share one map, which nothing changes: a caller
// that adds or drops a label clones it.
func (b *builder) identity(window time.Duration) map[string]string {
	if id, ok := b.ids[window]; ok {
		return id
	}
	if b.ids == nil {
		b.ids = map[time.Duration]map[string]string{}
	}
	id := map[string]string{
		model.LabelSLO:     b.slo.Name,
		model.LabelService: b.slo.Service.Name,
		model.LabelSLI:     model.SLIName(b.slo),
		model.LabelWindow:  model.FormatDuration(window),
	}
	if b.slo.SLOTier != "" {
		id[model.LabelSLOTier] = b.slo.SLOTier
	}
	b.ids[window] = id
	return id
}

func (b *builder) record(name, expr string, labels map[string]string) {
	b.rules = append(b.rules, rulefmt.Rule{Record: name, Expr: expr, Labels: labels})
}

func (b *builder) recordings() error {
	sli := b.slo.SLI
	if b.slo.Timeslices != nil {
		return b.sliceRecordings()
	}
	if sli.Raw != nil {
		return b.rawRecordings()
	}
	if err := b.baseRates(); err != nil {
		return err
	}
	tile := TileWindow(b.slo)
	b.windowRates(func(w time.Duration) bool { return tile > 0 && w == b.slo.Window })
	if tile > 0 {
		b.tiles(tile)
	}
	for _, w := range b.slo.Windows() {
		// Zero traffic leaves the ratio absent rather than NaN.
		b.record(model.ErrorRatio, fmt.Sprintf("%s / (%s > 0)", b.sel(model.BadEventsRate, w), b.sel(model.EventsRate, w)), b.identity(w))
	}
	b.budgetRemaining()
	return nil
}

// TileWindow is the tile of an SLO window built from tiles, or 0 when the
// SLO window averages the base recordings directly. Only the SLO window is
// tiled: no alert reads it, so its lag of up to one tile delays no alert.
// Tiles are whole hours, a multiple of the evaluation interval, and an SLO
// window of at least a week holds at least 168 of them, so the lag is at
// most 0.6% of the window (0.15% of 28d).
func TileWindow(slo model.SLO) time.Duration {
	const tile = time.Hour
	switch {
	case slo.Timeslices != nil, slo.SLI.Raw != nil:
		return 0
	case slo.Evaluation <= 0 || tile%slo.Evaluation != 0 || slo.BaseWindow() > tile:
		return 0
	case slo.Window < 7*24*time.Hour || slo.Window%tile != 0:
		return 0
	case sumsTerms(slo, slo.Window) > 0:
		// Sums of a shorter window build it exactly, with no lag.
		return 0
	}
	return tile
}

// tiles records the SLO window's event rates from tiles: the events and
// bad events counted in each tile (the base recordings summed over the
// tile, each sample standing for one evaluation interval), and the SLO
// window's rates as a subquery that reads one tile sample per tile. The
// subquery steps fall on whole multiples of the tile, and the tile recorded
// there covers the tile before it, so its samples cover the tiles ending at
// the last step without overlap or gap; summing counts, not averaging rates,
// keeps a partly filled tile (a fresh Prometheus, a missed evaluation)
// weighted by what it counted. The window thus ends at the last whole tile:
// at most one tile ago. A 28d window reads 672 tile samples per series
// instead of 40,320 base samples.
func (b *builder) tiles(tile time.Duration) {
	w := b.slo.Window
	for _, n := range [][2]string{{model.EventsRate, model.EventsIncrease}, {model.BadEventsRate, model.BadEventsIncrease}} {
		b.record(n[1], fmt.Sprintf("sum_over_time(%s[%s]) * %s", b.sel(n[0], b.base), model.FormatDuration(tile), seconds(b.slo.Evaluation)), b.identity(tile))
	}
	for _, n := range [][2]string{{model.EventsRate, model.EventsIncrease}, {model.BadEventsRate, model.BadEventsIncrease}} {
		// Until a whole tile exists (a fresh Prometheus, a new group), the
		// tile being filled holds everything counted so far.
		b.record(n[0], fmt.Sprintf("sum_over_time(%s[%s:%s]) / %s or %s / %s", b.sel(n[1], tile), model.FormatDuration(w), model.FormatDuration(tile), seconds(w), b.sel(n[1], tile), seconds(w)), b.identity(w))
	}
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// baseRates records the events and bad events per second over the base
// window, the only rules of a ratio SLI that read raw series.
func (b *builder) baseRates() error {
	sli := b.slo.SLI
	if sli.Total == nil {
		// An SLO whose indicator did not resolve, as a caller's check of
		// a spec with errors may pass.
		return fmt.Errorf("the SLI has no total events")
	}
	total, err := b.rate(sli.Total.Expr)
	if err != nil {
		return fmt.Errorf("total query: %w", err)
	}
	b.record(model.EventsRate, b.outsideMaintenance(total), b.identity(b.base))
	events := b.sel(model.EventsRate, b.base)
	switch {
	case sli.Bad != nil:
		bad, err := b.rate(sli.Bad.Expr)
		if err != nil {
			return fmt.Errorf("bad query: %w", err)
		}
		// A bad-event series that never appeared means no bad events yet.
		b.record(model.BadEventsRate, b.outsideMaintenance(fmt.Sprintf("%s or %s (0 * %s)", bad, b.on(), events)), b.identity(b.base))
	case sli.Good != nil:
		good, err := b.rate(sli.Good.Expr)
		if err != nil {
			return fmt.Errorf("good query: %w", err)
		}
		// Good and total are scraped apart, so their difference can dip
		// below zero for a moment; no good series at all means no good
		// events. group_left keeps the events' labels, so the `or` fallback
		// matches and drops out instead of adding a second series.
		b.record(model.BadEventsRate, b.outsideMaintenance(fmt.Sprintf("clamp_min(%s - %s group_left () %s, 0) or %s", events, b.on(), good, events)), b.identity(b.base))
	default:
		return fmt.Errorf("the SLI has neither good nor bad events")
	}
	return nil
}

// rawRecordings handles an SLI whose query yields the ratio itself: with no
// event counts to weigh by, longer windows average the base ratio over time.
func (b *builder) rawRecordings() error {
	sli := b.slo.SLI
	q, err := query.AvgBy(sli.Raw.Expr, b.slo.GroupBy)
	if err != nil {
		return fmt.Errorf("raw query: %w", err)
	}
	if sli.RawType == "success" {
		q = "1 - " + q
	}
	// Comparing drops NaN, which would otherwise stick in every window average.
	b.record(model.ErrorRatio, b.outsideMaintenanceRatio(fmt.Sprintf("(%s) >= 0", q)), b.identity(b.base))
	b.averageWindows(model.ErrorRatio)
	return nil
}

// averageWindows records every longer window's error ratio as the time
// average of the base window's series of the given name, then the burn
// rates.
func (b *builder) averageWindows(name string) {
	for _, w := range b.slo.Windows() {
		if w == b.base {
			continue
		}
		b.record(model.ErrorRatio, fmt.Sprintf("avg_over_time(%s[%s])", b.sel(name, b.base), model.FormatDuration(w)), b.identity(w))
	}
	b.budgetRemaining()
}

// budgetRemaining records the budget left over the SLO window. Burn rates
// are not recorded: the alerts, dashboards and KEDA divide the error ratio
// by the budget where they read it (model.BurnRate).
func (b *builder) budgetRemaining() {
	if b.slo.Calendar != nil {
		b.calendar()
		return
	}
	b.record(model.BudgetRemaining, "1 - "+model.BurnRate(b.slo, b.slo.Window), b.identity(b.slo.Window))
}

func (b *builder) rate(q string) (string, error) {
	if b.slo.SLI.Counter {
		return query.RateBy(q, b.base, b.slo.GroupBy)
	}
	return query.SumBy(q, b.slo.GroupBy)
}

// on matches the series of one group: `on ()` for an SLO of one group.
func (b *builder) on(labels ...string) string {
	return "on (" + strings.Join(append(labels, b.slo.GroupBy...), ", ") + ")"
}

func (b *builder) metadata() {
	id := maps.Clone(b.identity(0))
	delete(id, model.LabelWindow)
	b.record(model.Objective, fmt.Sprintf("vector(%s)", b.slo.Objective), id)
	info := maps.Clone(b.identity(b.slo.Window))
	info[model.LabelWindow] = b.slo.WindowLabel()
	info["objective"] = b.slo.Objective.String()
	info[model.LabelBaseWindow] = model.FormatDuration(b.base)
	if inf := b.slo.Inference; inf != nil {
		info["engine"] = inf.Engine
		if !inf.Threshold.IsZero() {
			info["threshold"] = inf.Threshold.String()
		}
		if inf.TTFTDenominator != "" {
			info["ttft_denominator"] = inf.TTFTDenominator
		}
	}
	if ts := b.slo.Timeslices; ts != nil {
		info["budgeting"] = b.slo.Budgeting
		info[model.LabelTimeSlice] = model.FormatDuration(ts.Window)
		info[model.LabelScrapeInterval] = model.FormatDuration(b.slo.ScrapeInterval)
		if ts.Evaluation > 0 {
			info[model.LabelEvaluationInterval] = model.FormatDuration(ts.Evaluation)
		}
	}
	b.record(model.Info, "vector(1)", info)
}

// misconfigured records, for each threshold bucket the good events read,
// whether it is absent while the total's series exist.
func (b *builder) misconfigured() []string {
	buckets := b.slo.SLI.ThresholdBuckets()
	if len(buckets) == 0 || b.slo.SLI.Total == nil {
		return buckets
	}
	id := maps.Clone(b.identity(0))
	delete(id, model.LabelWindow)
	total := b.slo.SLI.Total.Expr
	for _, sel := range buckets {
		if len(b.slo.GroupBy) == 0 {
			b.record(model.Misconfigured, fmt.Sprintf("absent(%s) and on () (count(%s) > 0)", sel, total), id)
			continue
		}
		// absent() cannot say which group lacks the bucket while others
		// have it: count the groups with events, less those with the
		// bucket, and name the bucket as absent() would.
		gid := maps.Clone(id)
		gid["le"] = query.BucketBound(sel)
		by := strings.Join(b.slo.GroupBy, ", ")
		b.record(model.Misconfigured, fmt.Sprintf("count by (%s) (%s) * 0 + 1\nunless on (%s)\ncount by (%s) (%s)", by, total, by, by, sel), gid)
	}
	return buckets
}
