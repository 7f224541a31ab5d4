package simulate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

// TimelineOptions shape the review scenario; the zero value uses the
// defaults.
type TimelineOptions struct {
	// Healthy is the healthy history before the burn; default one day.
	Healthy time.Duration
	// SkipBurn replays the healthy part only.
	SkipBurn bool
	// Recovery caps the healthy tail after the burn; default 3h. The tail
	// ends earlier once every alert the burn fired has resolved and settled.
	Recovery time.Duration
	// Step is the query step; default 5m. BurnStep is the finer step from
	// an hour before the burn on; default 1m.
	Step, BurnStep time.Duration
	// Shape of the synthetic workload; default 3 pods, 1 model.
	Shape Shape
	// RPS is the mean requests per second per pod; default 10.
	RPS float64
	// Parallel is how many services replay at once; default GOMAXPROCS.
	Parallel int
	// Done, when set, is called as each service's replay ends, from the
	// goroutine that ran it (a command shows progress with it).
	Done func()
	// everyRule evaluates whole groups at every interval (tests compare).
	everyRule bool
}

func (o TimelineOptions) withDefaults() TimelineOptions {
	if o.Healthy == 0 {
		o.Healthy = 24 * time.Hour
	}
	if o.Recovery == 0 {
		o.Recovery = 3 * time.Hour
	}
	if o.Step == 0 {
		o.Step = 5 * time.Minute
	}
	if o.BurnStep == 0 {
		o.BurnStep = time.Minute
	}
	if o.Shape.Pods == 0 {
		o.Shape.Pods = 3
	}
	if o.Shape.Models == 0 {
		o.Shape.Models = 1
	}
	if o.RPS == 0 {
		o.RPS = 10
	}
	if o.Parallel == 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	return o
}

// Timeline is what a review scenario looked like: every query's result over
// the replay and the intervals during which alerts fired.
type Timeline struct {
	// Series holds each query's result, keyed by the query as given.
	Series map[string][]TimeSeries
	// Alerts are the firing intervals, as the rules manager saw them after
	// every evaluation, ordered by service, SLO, alert and start.
	Alerts []AlertInterval
	// Burns are the fast burns, one per service replayed with a burn.
	Burns []Burn
	// Skipped lists SLOs that could not be replayed, with the reason.
	Skipped []string
	// From and To bound the replay.
	From, To time.Time
}

// TimeSeries is one series of a query result.
type TimeSeries struct {
	Labels map[string]string
	Points []Sample
}

// Sample is one point of a series.
type Sample struct {
	T time.Time
	V float64
}

// AlertInterval is one stretch during which an alert fired; To is the
// first evaluation that found it resolved, or the end of the replay.
type AlertInterval struct {
	Name, Severity, SLO, Service string
	// Group names the group of a grouped SLO the alert fired for
	// (`model_name="vllm-a"`); empty for an ungrouped SLO.
	Group    string
	From, To time.Time
}

// Burn is a service's fast burn: its span and each SLO's burn rate.
type Burn struct {
	Service  string
	From, To time.Time
	// Rates maps SLO names to the burn rate (error ratio over budget).
	Rates map[string]float64
	// Groups maps grouped SLOs to the one group that burns; the others
	// stay healthy.
	Groups map[string]string
}

// Describe says in a sentence or two what the timeline replayed.
func (tl Timeline) Describe() string {
	const caveat = " Windows longer than the replay, the SLO window's budget among them, count only the replayed traffic, as in a Prometheus started with it."
	if len(tl.Burns) == 0 {
		return "a healthy day: traffic follows a daily cycle, errors stay below the error budget rate." + caveat
	}
	grouped := ""
	for _, b := range tl.Burns {
		if len(b.Groups) > 0 {
			grouped = " A grouped SLO burns in one group only (the first model); its other groups stay healthy, and only the burning group may page."
			break
		}
	}
	return "a healthy day (traffic following a daily cycle, errors below the error budget rate), " +
		"then a fast burn on every SLO until its page alert fires (its quickest ticket when it pages nobody), then recovery." + grouped + caveat
}

// RunTimeline compiles the set's rules and replays one review scenario per
// service: a healthy day, a fast burn on every SLO of the service until
// every page alert fires (the quickest ticket of an SLO that pages nobody),
// then recovery. Each SLO runs in its own harness (its own rule group over
// its own engine-shaped series, as in Run); the first SLO of each engine
// and selector also carries the engine's token counters and its queue,
// running and KV-cache gauges. Each query is then evaluated at
// the options' step in every harness it may read from, and the results are
// merged: a label set seen twice keeps the harness whose SLI histogram the
// query names, else the first.
func RunTimeline(set model.Set, queries []string, opts TimelineOptions) (Timeline, error) {
	tls := make([]Timeline, len(servicesOf(set)))
	err := RunServiceTimelines(set, func(string) []string { return queries }, opts, func(i int, _ string, tl Timeline) error {
		tls[i] = tl
		return nil
	})
	if err != nil {
		return Timeline{}, err
	}
	return Merge(tls), nil
}

// RunServiceTimelines replays each service's review scenario as RunTimeline
// does, evaluating in that service's harnesses only the queries
// queries(service) lists, and hands each service's timeline to each as soon
// as it is done, with the service and its index among the set's services in
// spec order. Services
// replay Parallel at a time, each with its own rules only, so memory holds
// the replays in flight rather than the whole set. each runs on the
// replaying goroutine, concurrently for different services.
func RunServiceTimelines(set model.Set, queries func(service string) []string, opts TimelineOptions, each func(i int, service string, tl Timeline) error) error {
	opts = opts.withDefaults()
	services := servicesOf(set)
	bySvc := map[string][]model.SLO{}
	for _, s := range set.SLOs {
		bySvc[s.Service.Name] = append(bySvc[s.Service.Name], s)
	}
	errs := make([]error, len(services))
	var failed atomic.Bool
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for i, svc := range services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if failed.Load() {
				return
			}
			tl, err := replayService(svc, bySvc[svc], queries(svc), opts)
			if err == nil {
				err = each(i, svc, tl)
			}
			if opts.Done != nil {
				opts.Done()
			}
			if err != nil {
				errs[i] = fmt.Errorf("service %s: %w", svc, err)
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// servicesOf lists the set's services in spec order.
func servicesOf(set model.Set) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range set.SLOs {
		if !seen[s.Service.Name] {
			seen[s.Service.Name] = true
			out = append(out, s.Service.Name)
		}
	}
	return out
}

// replayService compiles one service's rules and replays its scenario.
func replayService(svc string, slos []model.SLO, queries []string, opts TimelineOptions) (Timeline, error) {
	// The replay reads series and alert states, never annotation text.
	files, err := irules.Build(model.Set{SLOs: slos}, nil)
	if err != nil {
		return Timeline{}, fmt.Errorf("compile rules: %w", err)
	}
	// Parsed once for the service: each SLO's harness loads its own group.
	x, err := indexRules(files)
	if err != nil {
		return Timeline{}, err
	}
	parsed := make([]parser.Expr, len(queries))
	p := query.NewParser()
	for i, q := range queries {
		if parsed[i], err = p.ParseExpr(q); err != nil {
			return Timeline{}, fmt.Errorf("query %q: %w", q, err)
		}
	}
	r := &serviceReplay{service: svc, opts: opts, rules: x.byName()}
	if err := r.replay(slos, queries, parsed); err != nil {
		return Timeline{}, err
	}
	tl := Timeline{Series: r.series, Alerts: r.alerts, Skipped: r.skipped, From: epoch(), To: epoch().Add(r.end)}
	if tl.Series == nil {
		tl.Series = map[string][]TimeSeries{}
	}
	if r.burn != nil {
		tl.Burns = []Burn{*r.burn}
	}
	sortAlerts(tl.Alerts)
	return tl, nil
}

// Merge joins service timelines into one, in order: a query's label set
// seen in two keeps the first timeline's series.
func Merge(tls []Timeline) Timeline {
	out := Timeline{Series: map[string][]TimeSeries{}, From: epoch()}
	for _, tl := range tls {
		for q, ss := range tl.Series {
			out.Series[q] = mergeSeries(out.Series[q], ss)
		}
		out.Alerts = append(out.Alerts, tl.Alerts...)
		out.Burns = append(out.Burns, tl.Burns...)
		out.Skipped = append(out.Skipped, tl.Skipped...)
		if tl.To.After(out.To) {
			out.To = tl.To
		}
	}
	if out.To.IsZero() {
		out.To = out.From
	}
	sortAlerts(out.Alerts)
	return out
}

// sortAlerts orders firing intervals by service, SLO, alert and start.
func sortAlerts(as []AlertInterval) {
	sort.SliceStable(as, func(i, j int) bool {
		a, b := as[i], as[j]
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		if a.SLO != b.SLO {
			return a.SLO < b.SLO
		}
		if a.Name != b.Name || a.Severity != b.Severity {
			return a.Name+a.Severity < b.Name+b.Severity
		}
		return a.From.Before(b.From)
	})
}

// serviceReplay replays one service's SLOs in lockstep, so their charts
// share one time axis.
type serviceReplay struct {
	service string
	opts    TimelineOptions
	// rules are the service's rule groups by name.
	rules map[string]ruleIndex

	sims    []*replaySim
	series  map[string][]TimeSeries
	alerts  []AlertInterval
	burn    *Burn
	skipped []string
	end     time.Duration
}

// replaySim is one SLO's harness during a replay.
type replaySim struct {
	slo  model.SLO
	h    *harness
	d    *driver
	eval time.Duration
	rate float64 // burn rate during the burn
	// healthy drive the groups of a grouped SLO other than d's, which
	// burns: they stay at the healthy rate throughout.
	healthy []*driver
	// group names d's group of a grouped SLO (`model_name="vllm-a"`).
	group string
	// severity is the tier the burn must fire ("" when none can), and
	// deadline how long the burn may last before giving up on it: twice
	// the workbook's predicted delay, as in `inferslo test`.
	severity string
	deadline time.Duration
	// full is the SLO's group; base only its base-window recordings,
	// which every longer window averages (see run).
	full, base []*rules.Group
	// gauges are the engine gauges this harness carries, per pod.
	gauges []gaugeSeries
	refs   []storage.SeriesRef
	open   map[groupAlert]time.Duration
}

// groupAlert is an alert of one group (empty for an ungrouped SLO).
type groupAlert struct {
	alertKey
	group string
}

type gaugeSeries struct {
	labels labels.Labels
	pod    int
	kind   string // waiting, running, kv
}

func (r *serviceReplay) close() {
	for _, s := range r.sims {
		s.h.close()
	}
}

func (r *serviceReplay) replay(slos []model.SLO, queries []string, parsed []parser.Expr) error {
	defer r.close()
	// Each engine and selector's gauges and token counters ride with its
	// first SLO, so a service of several engines shows each one's load.
	signalled := map[string]bool{}
	for _, slo := range slos {
		if slo.SLI.Raw != nil {
			r.skipped = append(r.skipped, slo.Name+": a raw-ratio SLI has no event counts to synthesize")
			continue
		}
		var source string
		if inf := slo.Inference; inf != nil {
			source = inf.Engine + "\x00" + inf.Selector
		}
		s, err := r.newSim(slo, !signalled[source])
		if err != nil {
			return fmt.Errorf("slo %s: %w", slo.Name, err)
		}
		if len(s.gauges) > 0 {
			signalled[source] = true
		}
		r.sims = append(r.sims, s)
	}
	if len(r.sims) == 0 {
		return nil
	}
	if err := r.run(); err != nil {
		return err
	}
	return r.query(queries, parsed)
}

func (r *serviceReplay) newSim(slo model.SLO, signals bool) (*replaySim, error) {
	h, err := newIndexedHarness(r.rules[irules.GroupName(slo)], false)
	if err != nil {
		return nil, err
	}
	s := &replaySim{slo: slo, h: h, open: map[groupAlert]time.Duration{}}
	if len(h.groups) == 0 {
		h.close()
		return nil, fmt.Errorf("no rule group %s in the rule files", irules.GroupName(slo))
	}
	s.eval = h.groups[0].Interval()
	// A started Prometheus marks its alerts restored before it writes
	// ALERTS series; the dashboards' alert panels read those.
	for _, g := range h.groups {
		for _, rule := range g.Rules() {
			if ar, ok := rule.(*rules.AlertingRule); ok {
				ar.SetRestored(true)
			}
		}
	}
	s.full = append([]*rules.Group(nil), h.groups...)
	baseWindow := model.FormatDuration(slo.BaseWindow())
	h.restrict(func(rr *rules.RecordingRule) bool { return rr.Labels().Get(model.LabelWindow) == baseWindow })
	s.base, h.groups = h.groups, s.full
	w, groups, err := replayWorkloads(slo, r.opts.Shape)
	if err != nil {
		h.close()
		return nil, err
	}
	if signals && slo.Inference != nil {
		s.gauges = addSignals(slo, w)
	}
	scrape := slo.ScrapeInterval
	if scrape <= 0 {
		scrape = 30 * time.Second
	}
	budget := slo.ErrorBudget().Float()
	s.d = newDriver(h, w, budget, scrape, slo.BaseWindow()+2*scrape)
	if len(groups) > 0 {
		s.group = groups[0].name
		for _, g := range groups[1:] {
			s.healthy = append(s.healthy, newDriver(h, g.w, budget, scrape, slo.BaseWindow()+2*scrape))
		}
	}
	s.refs = make([]storage.SeriesRef, len(s.gauges))
	// The fast burn of `inferslo test`: twice the largest factor of the
	// tier it targets, kept below a 100% error ratio. The page tier is the
	// target; an SLO that pages nobody burns its quickest ticket tier.
	s.rate = math.Min(10, 1/budget)
	var best time.Duration = -1
	for _, tier := range slo.Alerting.Tiers {
		if hasPage(slo) && tier.Severity != "page" {
			continue
		}
		fs := factors(tier)
		maxF := fs[len(fs)-1]
		rate := math.Min(2*maxF, (maxF+1/budget)/2)
		d, ok := tierDetect(tier, r.opts.Healthy, healthyBurn, rate, nil)
		if !ok {
			continue
		}
		if delay := 2 * (d + tier.For + slo.BaseWindow() + s.eval); best < 0 || delay < best {
			best, s.rate, s.severity, s.deadline = delay, rate, tier.Severity, delay
		}
	}
	return s, nil
}

// addSignals adds the engine's token counters to a workload (linear in
// requests, like every workload series) and returns the gauges to write
// beside it, one set per pod.
func addSignals(slo model.SLO, w *workload) []gaugeSeries {
	inf := slo.Inference
	base := map[string]string{}
	if inf.Selector != "" {
		if ms, err := query.NewParser().ParseMetricSelector("{" + inf.Selector + "}"); err == nil {
			if v, err := satisfying(ms); err == nil {
				base = v
			}
		}
	}
	have := map[string]bool{}
	for _, s := range w.series {
		have[s.labels.Get(query.MetricNameLabel)] = true
	}
	mk := func(name string, pod int) labels.Labels {
		b := labels.NewBuilder(labels.FromMap(base))
		b.Set(query.MetricNameLabel, name)
		b.Set("pod", fmt.Sprintf("sim-%d", pod))
		b.Set("instance", fmt.Sprintf("sim-%d:8000", pod))
		return b.Labels()
	}
	sig := inf.Signals
	// Tokens per request: a chat-sized prompt and answer.
	for _, c := range []struct {
		name string
		per  float64
	}{{sig.PromptTokens, 900}, {sig.GenerationTokens, 300}} {
		if c.name == "" || have[c.name] {
			continue
		}
		for pod := 0; pod < w.pods; pod++ {
			w.series = append(w.series, series{labels: mk(c.name, pod), pod: pod, coefN: c.per})
		}
	}
	var out []gaugeSeries
	for _, g := range []struct{ name, kind string }{
		{sig.QueueDepth, "waiting"}, {sig.Running, "running"}, {sig.KVCacheUsage, "kv"},
	} {
		if g.name == "" || have[g.name] {
			continue
		}
		for pod := 0; pod < w.pods; pod++ {
			out = append(out, gaugeSeries{labels: mk(g.name, pod), pod: pod, kind: g.kind})
		}
	}
	return out
}

// dailyLoad is the relative traffic at t: a daily cycle, quietest at
// midnight of the simulated day, 1.4x at noon.
func dailyLoad(t time.Duration) float64 {
	return 1 - 0.4*math.Cos(2*math.Pi*float64(t)/float64(24*time.Hour))
}

func hasPage(slo model.SLO) bool {
	_, ok := tierBySeverity(slo, "page")
	return ok
}

// healthyRate wobbles the healthy burn rate between 0.3 and 0.7, below
// every alert factor.
func healthyRate(t time.Duration) float64 {
	return healthyBurn + 0.2*math.Sin(2*math.Pi*float64(t)/float64(5*time.Hour))
}

// run drives every harness of the service from 0 to the end of the
// scenario, evaluating each at its group's interval.
func (r *serviceReplay) run() error {
	step := r.sims[0].eval
	var deadline time.Duration
	anyTarget := false
	for _, s := range r.sims {
		if s.eval < step {
			step = s.eval
		}
		if s.severity != "" {
			anyTarget = true
			if s.deadline > deadline {
				deadline = s.deadline
			}
		}
	}
	if !anyTarget {
		deadline = time.Hour
	}
	burnFrom := r.opts.Healthy
	burnTo := time.Duration(math.MaxInt64)
	var resolvedAt time.Duration = -1
	burning := func(t time.Duration) bool { return !r.opts.SkipBurn && t > burnFrom && t <= burnTo }
	end := r.opts.Healthy
	if !r.opts.SkipBurn {
		end = burnFrom + deadline + r.opts.Recovery
	}
	// Far from the burn, only the base-window recordings are evaluated
	// between query steps: longer windows average the base series, which
	// stays as dense as Prometheus would record it, so their values at the
	// query steps are exact, and the replay is several times faster.
	fineFrom := r.opts.Healthy - time.Hour
	if r.opts.SkipBurn {
		fineFrom = end + 1
	}
	if r.opts.everyRule {
		fineFrom = 0
	}
	var t time.Duration
	for t = 0; t <= end; t += step {
		for _, s := range r.sims {
			if t%s.eval != 0 {
				continue
			}
			coarse := t < fineFrom && t%r.opts.Step != 0 && t != end
			s.h.groups = s.full
			if coarse {
				s.h.groups = s.base
			}
			load := func(at time.Duration) (float64, float64) {
				rps := dailyLoad(at) * r.opts.RPS
				if burning(at) {
					return rps, s.rate
				}
				return rps, healthyRate(at)
			}
			if err := s.d.advance(t, load, nil); err != nil {
				return err
			}
			for _, d := range s.healthy {
				if err := d.advance(t, func(at time.Duration) (float64, float64) {
					return dailyLoad(at) * r.opts.RPS, healthyRate(at)
				}, nil); err != nil {
					return err
				}
			}
			if err := s.writeGauges(t, dailyLoad(t), burning(t)); err != nil {
				return err
			}
			if err := s.h.eval(t); err != nil {
				return fmt.Errorf("slo %s at +%s: %w", s.slo.Name, model.FormatDuration(t), err)
			}
			if !coarse {
				s.track(t, r)
			}
		}
		if r.opts.SkipBurn {
			continue
		}
		firing := r.targetFiring()
		switch {
		case burnTo == math.MaxInt64 && t > burnFrom && (anyTarget && r.allTargetsFired() || t >= burnFrom+deadline):
			burnTo = t
		case burnTo != math.MaxInt64 && !firing && resolvedAt < 0 && t >= burnTo+time.Hour:
			resolvedAt = t
		}
		if resolvedAt >= 0 && t >= resolvedAt+30*time.Minute {
			break
		}
		if burnTo != math.MaxInt64 && t >= burnTo+r.opts.Recovery {
			break
		}
	}
	if t > end {
		t = end
	}
	r.end = t
	for _, s := range r.sims {
		for k, from := range s.open {
			r.alerts = append(r.alerts, s.interval(k, from, t))
		}
	}
	if !r.opts.SkipBurn {
		b := &Burn{Service: r.service, From: epoch().Add(burnFrom), To: epoch().Add(min(burnTo, t)), Rates: map[string]float64{}, Groups: map[string]string{}}
		for _, s := range r.sims {
			b.Rates[s.slo.Name] = s.rate
			if s.group != "" {
				b.Groups[s.slo.Name] = s.group
			}
		}
		r.burn = b
	}
	return nil
}

// targetFiring tells whether the alert some SLO's burn targets still fires.
func (r *serviceReplay) targetFiring() bool {
	for _, s := range r.sims {
		for k := range s.open {
			if k.alertKey == (alertKey{model.AlertBurn, s.severity}) && s.severity != "" {
				return true
			}
		}
	}
	return false
}

// allTargetsFired tells whether every SLO's targeted alert has fired during
// this burn.
func (r *serviceReplay) allTargetsFired() bool {
	for _, s := range r.sims {
		if s.severity == "" {
			continue
		}
		fired := false
		for k := range s.open {
			if k.alertKey == (alertKey{model.AlertBurn, s.severity}) {
				fired = true
			}
		}
		for _, a := range r.alerts {
			if a.SLO == s.slo.Name && a.Name == model.AlertBurn && a.Severity == s.severity && a.From.After(epoch().Add(r.opts.Healthy)) {
				fired = true
			}
		}
		if !fired {
			return false
		}
	}
	return true
}

// track opens and closes firing intervals, one per alert and group, after
// an evaluation.
func (s *replaySim) track(t time.Duration, r *serviceReplay) {
	st := map[groupAlert]rules.AlertState{}
	for g, states := range groupAlertStates(s.h, s.slo.GroupBy) {
		for k, v := range states {
			st[groupAlert{k, g}] = v
		}
	}
	for k, v := range st {
		if _, open := s.open[k]; v == rules.StateFiring && !open {
			s.open[k] = t
		}
	}
	for k, from := range s.open {
		if st[k] != rules.StateFiring {
			r.alerts = append(r.alerts, s.interval(k, from, t))
			delete(s.open, k)
		}
	}
}

func (s *replaySim) interval(k groupAlert, from, to time.Duration) AlertInterval {
	return AlertInterval{Name: k.name, Severity: k.severity, SLO: s.slo.Name, Service: s.slo.Service.Name, Group: k.group,
		From: epoch().Add(from), To: epoch().Add(to)}
}

// replayWorkloads is the series of one SLO's review replay: for a grouped
// SLO, three groups, the first of which burns (so the page shows one
// group's burn beside the others' health, each named); else one workload.
// A grouped SLO whose groups cannot be split replays as one.
func replayWorkloads(slo model.SLO, shape Shape) (*workload, []simGroup, error) {
	if len(slo.GroupBy) > 0 {
		if groups, err := groupWorkloads(slo, shape, 3); err == nil {
			return groups[0].w, groups, nil
		}
	}
	w, err := newWorkload(slo, shape)
	return w, nil, err
}

// writeGauges appends the engine gauges at t: load follows traffic, and a
// burn shows as the queue and the KV cache filling up, the way an
// overloaded engine degrades.
func (s *replaySim) writeGauges(t time.Duration, load float64, burning bool) error {
	if len(s.gauges) == 0 {
		return nil
	}
	app := s.h.db.Appender(context.Background())
	ms := epoch().Add(t).UnixMilli()
	pods := s.d.w.pods
	for i, g := range s.gauges {
		share := podShare(g.pod, pods) * load
		var v float64
		switch g.kind {
		case "waiting":
			v = math.Round(math.Max(0, 4*(share-0.9)))
			if burning {
				v += math.Round(30 * podShare(g.pod, pods))
			}
		case "running":
			v = math.Round(20 * share)
			if burning {
				v = math.Max(v, 56)
			}
		case "kv":
			v = 0.25 + 0.3*share
			if burning {
				v = 0.9 + 0.02*float64(g.pod)
			}
			v = math.Min(v, 0.99)
		}
		ref, err := app.Append(s.refs[i], g.labels, ms, v)
		if err != nil {
			app.Rollback()
			return fmt.Errorf("append gauge sample: %w", err)
		}
		s.refs[i] = ref
	}
	if err := app.Commit(); err != nil {
		return fmt.Errorf("commit gauge samples: %w", err)
	}
	return nil
}

// query evaluates every query over the replay in the harnesses it may read
// from: coarse steps for the healthy history, fine ones from an hour before
// the burn.
func (r *serviceReplay) query(queries []string, parsed []parser.Expr) error {
	type span struct {
		from, to, step time.Duration
	}
	var spans []span
	fine := r.opts.Healthy - time.Hour
	if r.opts.SkipBurn || fine <= 0 {
		spans = []span{{0, r.end, r.opts.Step}}
	} else {
		coarseEnd := fine - fine%r.opts.Step
		spans = []span{{0, coarseEnd, r.opts.Step}, {coarseEnd + r.opts.BurnStep, r.end, r.opts.BurnStep}}
	}
	r.series = map[string][]TimeSeries{}
	for i, q := range queries {
		var got []TimeSeries
		for _, s := range r.order(q, parsed[i]) {
			var one []TimeSeries
			for _, sp := range spans {
				if sp.to < sp.from {
					continue
				}
				var err error
				if one, err = s.h.rangeQuery(one, q, sp.from, sp.to, sp.step); err != nil {
					return fmt.Errorf("query %q: %w", q, err)
				}
			}
			got = mergeSeries(got, one)
		}
		if len(got) > 0 {
			r.series[q] = got
		}
	}
	return nil
}

// order lists the harnesses a query may read from, preferred first: those
// whose SLI histogram the query names, then the rest in spec order. A
// harness is left out when every selector's slo or service matcher
// rejects its SLO.
func (r *serviceReplay) order(q string, expr parser.Expr) []*replaySim {
	var first, rest []*replaySim
	for _, s := range r.sims {
		if !mayRead(expr, s.slo) {
			continue
		}
		// A native histogram is named bare; a classic one by its series.
		if inf := s.slo.Inference; inf != nil && inf.Histogram != "" && (strings.Contains(q, inf.Histogram+"_") || inf.Native && strings.Contains(q, inf.Histogram)) {
			first = append(first, s)
		} else {
			rest = append(rest, s)
		}
	}
	return append(first, rest...)
}

func mayRead(expr parser.Expr, slo model.SLO) bool {
	found := false
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || found {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == model.LabelSLO && !m.Matches(slo.Name) ||
				m.Name == model.LabelService && !m.Matches(slo.Service.Name) {
				return nil
			}
		}
		found = true
		return nil
	})
	return found
}

// rangeQuery runs a range query over simulated time and adds its result
// to out. The result is copied before the query closes: closing hands the
// matrix's points back to a pool that other queries, in other goroutines,
// fill again.
func (h *harness) rangeQuery(out []TimeSeries, qs string, from, to, step time.Duration) ([]TimeSeries, error) {
	q, err := h.engine.NewRangeQuery(context.Background(), h.db, nil, qs, epoch().Add(from), epoch().Add(to), step)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	res := q.Exec(context.Background())
	if res.Err != nil {
		return nil, res.Err
	}
	m, err := res.Matrix()
	if err != nil {
		return nil, err
	}
	return appendMatrix(out, m), nil
}

// appendMatrix adds a range result to series, joining the points of equal
// label sets.
func appendMatrix(out []TimeSeries, m promql.Matrix) []TimeSeries {
	for _, s := range m {
		ls := s.Metric.Map()
		idx := -1
		for i := range out {
			if sameLabels(out[i].Labels, ls) {
				idx = i
				break
			}
		}
		if idx < 0 {
			out = append(out, TimeSeries{Labels: ls})
			idx = len(out) - 1
		}
		for _, p := range s.Floats {
			out[idx].Points = append(out[idx].Points, Sample{T: time.UnixMilli(p.T).UTC(), V: p.F})
		}
	}
	return out
}

// mergeSeries adds the series of add whose label sets dst lacks.
func mergeSeries(dst, add []TimeSeries) []TimeSeries {
	for _, s := range add {
		dup := false
		for _, d := range dst {
			if sameLabels(d.Labels, s.Labels) {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, s)
		}
	}
	return dst
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
