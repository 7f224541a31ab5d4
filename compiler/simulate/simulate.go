// Package simulate proves an SLO's alerts by replaying synthetic engine
// metrics through Prometheus' own rules manager and PromQL engine, in
// process and in simulated time.
//
// Each SLO gets counters shaped like its engine's (histogram buckets with
// the engine's `le` strings, _count, _sum, the finished-requests counter by
// finished_reason, several pods, a second model the rules must skip), and
// a set of scenarios, each asserting what the alerts or recorded series
// must do. Predictions come from the spec (model.SLO), observations from
// the rule files, so RunFiles catches a rule file edited by hand.
//
// Simulated spans are kept short, because constant traffic looks the same
// to every window once the windows hold data:
//   - healthy: half the budget rate for the page tier's longest window
//     (at most 2h) plus the longest `for`;
//   - fast and slow burn: healthy history as long as the page tier's
//     longest window, then the burn until the alert fires (at most twice
//     the prediction), then healthy until it resolves; an SLO without a
//     page tier gets the fast burn too, and its ticket must fire while
//     nothing pages;
//   - zero traffic: 1h healthy, 3h without requests, 1h healthy;
//   - counter reset: 2h healthy, two pods restarting;
//   - day/night: one day (or the SLO window, if shorter) of a daily cycle.
//     Windows longer than the simulated data (a 28d SLO window) average what
//     exists, as in a Prometheus that started with the simulation; covering
//     exactly one period makes the rate windows' overlap at both ends fall
//     on the same phase of the cycle, so the recorded ratio must equal the
//     counted one.
//
// Scenarios share what they can without changing what they see: the
// healthy history every scenario but day/night starts with is replayed
// once per SLO and copied where a scenario's traffic departs from it
// (trunk.go), and the day/night scenario evaluates each rule only at the
// steps its final reading depends on (schedule.go).
//
// The predicted alert delay is the workbook's detection time (first moment
// both windows of some pair exceed its factor, with the healthy history
// the windows hold) plus `for`, one base rate window (rate() lags by up to
// its range) and one evaluation interval.
package simulate

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/templates"
)

// Options tune a simulation run; the zero value uses the defaults.
type Options struct {
	// Shape of the synthetic workload; default 4 pods × 2 models.
	Shape Shape
	// RPS is the mean requests per second per pod; default 10.
	RPS float64
	// Parallel is how many replays run at once, and how many SLOs are in
	// flight (each holds its healthy history); default GOMAXPROCS.
	Parallel int
	// Text words the alert annotations; nil: the built-in templates.
	Text *templates.Text
	// Scenarios, when set, are the only scenarios run (ScenarioHealthy,
	// ScenarioFastBurn, ...); by default every one runs.
	Scenarios []string
	// Done, when set, is called as each SLO's scenarios end, from the
	// goroutine that ran them (a command shows progress with it).
	Done func()
	// Scratch is the folder the replays keep their storage in, one
	// folder each, removed as they end; "" is the system's temporary
	// folder.
	Scratch string
}

func (o Options) withDefaults() Options {
	if o.Shape.Pods == 0 {
		o.Shape.Pods = 4
	}
	if o.Shape.Models == 0 {
		o.Shape.Models = 2
	}
	if o.RPS == 0 {
		o.RPS = 10
	}
	if o.Parallel == 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	return o
}

// MemoryLimit is a soft memory limit (for debug.SetMemoryLimit) that holds
// a run of parallel replays, each needing a few tens of MB, with room for a
// collector tuned to collect rarely.
func MemoryLimit(parallel int) int64 { return int64(parallel+1) * 64 << 20 }

// Run compiles the set's rules and simulates every SLO, one service's rules
// at a time: memory holds the rules of the services being replayed, not the
// set's.
func Run(set model.Set, opts Options) (Result, error) {
	return runServices(set, opts, func(service model.ServiceSLOs) (map[string]ruleIndex, error) {
		files, err := irules.Build(model.Set{SLOs: service.SLOs}, opts.Text)
		if err != nil {
			return nil, fmt.Errorf("compile rules: %w", err)
		}
		x, err := indexRules(files)
		if err != nil {
			return nil, err
		}
		return x.byName(), nil
	})
}

// RunFiles simulates every SLO of the set against the given rule files
// (for example committed, possibly hand-edited artifacts). The SLO's group
// is found by its name (rules.GroupName); expectations come from the set.
func RunFiles(set model.Set, files artifact.Set, opts Options) (Result, error) {
	x, err := indexRules(files)
	if err != nil {
		return Result{}, err
	}
	byName := x.byName()
	return runServices(set, opts, func(model.ServiceSLOs) (map[string]ruleIndex, error) { return byName, nil })
}

// runServices simulates the SLOs service by service, opts.Parallel SLOs at
// once; rulesOf returns a service's rule groups by name when its turn comes.
// Results keep the set's order.
func runServices(set model.Set, opts Options, rulesOf func(model.ServiceSLOs) (map[string]ruleIndex, error)) (Result, error) {
	opts = opts.withDefaults()
	start := time.Now()
	position := make(map[string]int, len(set.SLOs))
	for i, slo := range set.SLOs {
		position[slo.Name] = i
	}
	results := make([][]Check, len(set.SLOs))
	simulated := make([]time.Duration, len(set.SLOs))
	errs := make([]error, len(set.SLOs))
	// SLOs in flight hold their trunk's copies: as many as there are cores
	// keep memory bounded; their scenarios share the cores.
	sem := make(chan struct{}, opts.Parallel)
	cores := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	var buildErr error
	for _, service := range set.PerService() {
		byName, err := rulesOf(service)
		if err != nil {
			buildErr = fmt.Errorf("service %s: %w", service.Name, err)
			break
		}
		for _, slo := range service.SLOs {
			i := position[slo.Name]
			// Waiting here, not in the goroutine, keeps only the services
			// being replayed in memory.
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				s := &sloSim{slo: slo, rules: byName[irules.GroupName(slo)], opts: opts, cores: cores}
				results[i], errs[i] = s.all()
				simulated[i] = s.simulated
				if opts.Done != nil {
					opts.Done()
				}
			}()
		}
	}
	wg.Wait()
	if buildErr != nil {
		return Result{}, buildErr
	}
	var res Result
	for i := range set.SLOs {
		if errs[i] != nil {
			return Result{}, fmt.Errorf("slo %s: %w", set.SLOs[i].Name, errs[i])
		}
		res.Checks = append(res.Checks, results[i]...)
		res.Simulated += simulated[i]
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// sloSim runs the scenarios of one SLO.
type sloSim struct {
	slo model.SLO
	// rules is the SLO's group (more than one if files repeat its name).
	rules     ruleIndex
	opts      Options
	simulated time.Duration
	// eval is the group's interval as loaded from the file.
	eval time.Duration
	// only, when set, restricts the next run to the recordings it selects
	// and what they read.
	only func(*rules.RecordingRule) bool
	// shared is the healthy history the scenarios start from.
	shared *trunk
	// planned, when set, makes runs only note the longest span asked for.
	planned *time.Duration
	// everyStep evaluates a restricted run's rules at every step, not on
	// their schedule (for tests comparing the two).
	everyStep bool
	// cores, when set, holds a token per replay running, shared by all
	// SLOs of a run.
	cores chan struct{}
}

// healthyBurn is the burn rate of healthy traffic: half the budget rate.
const healthyBurn = 0.5

func (s *sloSim) scrape() time.Duration {
	if s.slo.ScrapeInterval > 0 {
		return s.slo.ScrapeInterval
	}
	return 30 * time.Second
}

func (s *sloSim) budget() float64 { return s.slo.ErrorBudget().Float() }

// groupName is the name of the SLO's rule group.
func (s *sloSim) groupName() string { return irules.GroupName(s.slo) }

// prehistory is how long scrapes run before the first evaluation, so the
// base window holds data from the start.
func (s *sloSim) prehistory() time.Duration { return s.slo.BaseWindow() + 2*s.scrape() }

// scaled is the load as the driver sends it: in whole bad slices for a
// time-slice SLO, at opts.RPS. Each call returns a fresh load, as a sliced
// one keeps state.
func (s *sloSim) scaled(load traffic) traffic {
	if ts := s.slo.Timeslices; ts != nil && !ts.Average {
		load = s.slicedLoad(load)
	}
	return func(t time.Duration) (float64, float64) {
		rps, burn := load(t)
		return rps * s.opts.RPS, burn
	}
}

// run replays one timeline from 0 to end in evaluation steps; each sees the
// alert states after every evaluation and may stop the run early when
// after is nil; after sees the Prometheus at the last evaluation. Steps
// whose scrapes all match the trunk's (healthy traffic, no restarts) are
// the trunk's, not replayed again.
func (s *sloSim) run(load traffic, restarts restart, end time.Duration,
	each func(t time.Duration, st map[alertKey]rules.AlertState) bool, after func(*harness, *driver, time.Duration) error) error {
	if s.planned != nil {
		*s.planned = max(*s.planned, end)
		return nil
	}
	if each == nil {
		each = func(time.Duration, map[alertKey]rules.AlertState) bool { return false }
	}
	if s.only != nil {
		return s.replay(load, restarts, end, each, after)
	}
	tr, err := s.trunk()
	if err != nil {
		return err
	}
	if err := s.checkSteps(end, s.prehistory()); err != nil {
		return err
	}
	states, snap, stops := tr.replayed(s.scaled(load), restarts, end, s.scrape(), s.prehistory(), s.opts.Shape.Pods)
	last := time.Duration(len(states)-1) * tr.eval
	full := len(states) > 0 && last+tr.eval > end
	if stops {
		// The run reaches the step where the trunk stopped, with the same
		// traffic.
		for i, st := range states {
			if each(time.Duration(i)*tr.eval, st) {
				return nil
			}
		}
		return tr.err
	}
	if !full || after != nil {
		if snap == nil {
			return s.replay(load, restarts, end, each, after)
		}
		states = states[:snap.at/tr.eval+1]
	}
	for i, st := range states {
		if each(time.Duration(i)*tr.eval, st) && after == nil {
			return nil
		}
	}
	if full && after == nil {
		return nil
	}
	c, ok, err := copyOf(snap.h, snap.d, s.rules)
	if err != nil {
		return err
	}
	if !ok {
		return s.replay(load, restarts, end, each, after)
	}
	defer c.h.close()
	// The load starts over with the trunk's scrapes: a sliced one counts
	// slices from its first call.
	scaled := s.scaled(load)
	for at := -s.prehistory(); at < c.d.next; at += s.scrape() {
		scaled(at)
	}
	return s.steps(c.h, c.d, scaled, restarts, snap.at+tr.eval, end, each, after)
}

// replay runs a timeline from zero in a Prometheus of its own.
func (s *sloSim) replay(load traffic, restarts restart, end time.Duration,
	each func(t time.Duration, st map[alertKey]rules.AlertState) bool, after func(*harness, *driver, time.Duration) error) error {
	h, err := newIndexedHarness(s.rules, false, s.opts.Scratch)
	if err != nil {
		return err
	}
	defer h.close()
	if len(h.groups) == 0 {
		return &ruleError{err: fmt.Errorf("no rule group %s in the rule files", s.groupName())}
	}
	s.eval = h.groups[0].Interval()
	if err := s.checkSteps(end, s.prehistory()); err != nil {
		return err
	}
	if s.only != nil {
		h.restrict(s.only)
		if sc, ok := newSchedule(h.groups, s.eval, end, s.only); ok && !s.everyStep {
			h.sched = sc
		}
	}
	w, err := newWorkload(s.slo, s.opts.Shape)
	if err != nil {
		return err
	}
	d := newDriver(h, w, s.budget(), s.scrape(), s.prehistory())
	return s.steps(h, d, s.scaled(load), restarts, 0, end, each, after)
}

// steps evaluates from start to end in evaluation steps.
func (s *sloSim) steps(h *harness, d *driver, load traffic, restarts restart, start, end time.Duration,
	each func(t time.Duration, st map[alertKey]rules.AlertState) bool, after func(*harness, *driver, time.Duration) error) error {
	last := start - s.eval
	for t := start; t <= end; t += s.eval {
		if err := d.advance(t, load, restarts); err != nil {
			return err
		}
		if err := h.eval(t); err != nil {
			// Broken rules are a finding about the rule file, not a
			// failure of the simulator.
			return &ruleError{at: t, err: err}
		}
		last = t
		if each(t, h.alertStates()) && after == nil {
			break
		}
	}
	s.simulated += last - start + s.eval
	if after != nil {
		return after(h, d, last)
	}
	return nil
}

// maxSteps bounds the rule evaluations and the scrapes of one SLO's
// scenarios: at the default intervals an SLO needs a few thousand; a day
// replayed at one-second intervals alone needs 86,400 and minutes of CPU,
// and a month at one second would take hours.
const maxSteps = 100_000

// Interval names the interval a replay-budget problem is about, so the
// front end can point at the spec property that sets it.
type Interval string

// The intervals CheckBudget may name.
const (
	EvaluationInterval Interval = "evaluation"
	ScrapeInterval     Interval = "scrape"
)

// CheckIntervals refuses, for `inferslo test`, an SLO whose scenarios
// together would need more than 100,000 rule evaluations or scrapes at the
// spec's intervals, naming the interval that would do ("" when none is
// refused). The spans come from the spec's windows, tiers and intervals, as
// the scenarios derive them.
func CheckIntervals(slo model.SLO) (Interval, string) { return CheckBudget(slo, maxSteps) }

// DefaultBudget is the rule evaluations and scrapes a run of `inferslo
// test` or `render` replays per SLO unless told otherwise (--budget): a
// few times what the default intervals need, about a minute of CPU at most.
// CheckIntervals' 100,000 take minutes per SLO.
const DefaultBudget = 25_000

// MaxBudget is the largest budget a run may be given.
const MaxBudget = maxSteps

// CheckBudget is CheckIntervals with a budget of its own: at most budget
// rule evaluations, and as many scrapes, per SLO (never more than
// CheckIntervals allows).
func CheckBudget(slo model.SLO, budget int64) (Interval, string) {
	budget = min(budget, maxSteps)
	s := &sloSim{slo: slo, opts: Options{}.withDefaults(), eval: slo.Evaluation}
	if s.eval <= 0 {
		s.eval = time.Minute
	}
	if _, ok := s.unproven(); ok {
		return "", ""
	}
	var total, scraped time.Duration
	for _, sc := range s.scenarios() {
		span := time.Duration(0)
		s.planned = &span
		if _, err := sc.run(s); err != nil {
			return "", ""
		}
		total += span
		scraped += span + s.prehistory()
	}
	s.planned = nil
	total, scraped = roundUp(total, time.Minute), roundUp(scraped, time.Minute)
	atLeast := func(span time.Duration) string {
		return model.FormatDuration(roundUp(time.Duration(math.Ceil(float64(span)/float64(budget))), time.Second))
	}
	// What else would do: a larger budget, when the cap allows one.
	orBudget := func(n int64) string {
		if budget < maxSteps && n <= maxSteps {
			return fmt.Sprintf(", a --budget of at least %d", n)
		}
		return ""
	}
	if n := int64(total / s.eval); n > budget {
		return EvaluationInterval, fmt.Sprintf(
			"inferslo test would replay %s of scenarios at the evaluation interval %s: %d rule evaluations, more than the %d it replays per SLO; valid: an evaluation interval of at least %s%s, or shorter alert windows",
			model.FormatDuration(total), model.FormatDuration(s.eval), n, budget, atLeast(total), orBudget(n))
	}
	if n := int64(scraped / s.scrape()); n > budget {
		return ScrapeInterval, fmt.Sprintf(
			"inferslo test would replay %s of scenarios at the scrape interval %s: %d scrapes, more than the %d it replays per SLO; valid: a scrape interval of at least %s%s, or shorter alert windows",
			model.FormatDuration(scraped), model.FormatDuration(s.scrape()), n, budget, atLeast(scraped), orBudget(n))
	}
	return "", ""
}

// checkSteps refuses a scenario whose rule file's interval needs more than
// maxSteps evaluations or scrapes (CheckIntervals refuses specs that do,
// before any replay).
func (s *sloSim) checkSteps(end, prehistory time.Duration) error {
	// The day/night scenario is the longest; checking it first thing
	// refuses the SLO before any scenario spends time.
	end = max(end, s.period())
	if s.eval <= 0 || int64(end/s.eval) > maxSteps {
		return fmt.Errorf("%s: slo %s: replaying %s at the rule group's evaluation interval %s needs more than %d evaluations; the rule file's interval must be at least %s",
			s.slo.Source, s.slo.Name, model.FormatDuration(end), s.eval, maxSteps, model.FormatDuration(roundUp(end/maxSteps+1, time.Second)))
	}
	if n := int64((end + prehistory) / s.scrape()); n > maxSteps {
		return fmt.Errorf("%s: slo %s: replaying %s at the scrape interval %s needs %d scrapes, more than %d; the scrape interval must be at least %s",
			s.slo.Source, s.slo.Name, model.FormatDuration(end+prehistory), s.scrape(), n, maxSteps, model.FormatDuration(roundUp((end+prehistory)/maxSteps+1, time.Second)))
	}
	return nil
}

// alertsOf lists the alerts the SLO's spec says its rules have.
func (s *sloSim) alertsOf() []alertKey {
	var out []alertKey
	for _, t := range s.slo.Alerting.Tiers {
		out = append(out, alertKey{model.AlertBurn, t.Severity})
	}
	if s.slo.Alerting.Outage != nil {
		out = append(out, outageKey)
	}
	if s.slo.Alerting.NoData {
		out = append(out, alertKey{model.AlertNoData, "ticket"})
	}
	return out
}

func (s *sloSim) check(scenario, subject, expected, observed string, pass bool) Check {
	return Check{SLO: s.slo.Name, Service: s.slo.Service.Name, Scenario: scenario, Subject: subject,
		Expected: expected, Observed: observed, Pass: pass}
}

// close releases the trunk's copies.
func (s *sloSim) close() {
	if s.shared != nil {
		s.shared.close()
		s.shared = nil
	}
}

// unproven is the check of an SLO the simulator cannot replay, if so.
func (s *sloSim) unproven() (Check, bool) {
	why := ""
	switch {
	case s.slo.SLI.Raw != nil:
		why = "a raw-ratio SLI has no event counts to synthesize, so its alerts were not replayed"
	case s.slo.SLI.Threshold != nil && s.slo.Timeslices != nil && s.slo.Timeslices.Evaluation > 0 && s.slo.SLI.Threshold.Quantile == 0:
		why = "its alerts were not replayed: the threshold query is no percentile of one histogram over one range, which the simulator models"
	case s.slo.SLI.Threshold != nil && s.slo.Timeslices != nil && s.slo.Timeslices.Evaluation > 0 && s.badStretch() < s.scrape():
		why = fmt.Sprintf("its alerts were not replayed: the query's range %s reaches back past the slice before, so the simulator cannot make one slice bad without the next",
			model.FormatDuration(s.slo.SLI.Threshold.Range))
	case s.slo.SLI.Threshold != nil:
		if _, err := newWorkload(s.slo, s.opts.Shape); err != nil {
			why = fmt.Sprintf("its alerts were not replayed: %v", err)
		}
	}
	if why == "" {
		return Check{}, false
	}
	c := s.check("all", "SLI", "simulated", why, true)
	c.NotProven = true
	return c, true
}

// scenario is one named scenario of an SLO.
type scenario struct {
	name string
	run  func(*sloSim) ([]Check, error)
}

// scenarios lists the scenarios to run, in order.
func (s *sloSim) scenarios() []scenario {
	var out []scenario
	for _, sc := range []scenario{
		{ScenarioHealthy, (*sloSim).healthy}, {ScenarioFastBurn, (*sloSim).fastBurn}, {ScenarioSlowBurn, (*sloSim).slowBurn},
		{ScenarioZeroTraffic, (*sloSim).zeroTraffic}, {ScenarioReset, (*sloSim).counterReset}, {ScenarioDayNight, (*sloSim).dayNight},
		{ScenarioGroupBurn, (*sloSim).groupBurn}, {ScenarioOutage, (*sloSim).outage}, {ScenarioRamp, (*sloSim).ramp},
	} {
		if len(s.opts.Scenarios) == 0 || slices.Contains(s.opts.Scenarios, sc.name) {
			out = append(out, sc)
		}
	}
	return out
}

// branch is a simulation of the same SLO for one scenario run beside the
// others: it shares the trunk, not the fields a run sets.
func (s *sloSim) branch() *sloSim {
	return &sloSim{slo: s.slo, rules: s.rules, opts: s.opts, eval: s.eval, shared: s.shared}
}

// all runs the SLO's scenarios, each on a core of its own once the trunk
// they start from is replayed (day/night, which does not, from the start),
// and reports their checks in order, up to the first broken rule.
func (s *sloSim) all() ([]Check, error) {
	defer s.close()
	if c, ok := s.unproven(); ok {
		return []Check{c}, nil
	}
	scs := s.scenarios()
	type outcome struct {
		checks    []Check
		err       error
		simulated time.Duration
	}
	outcomes := make([]outcome, len(scs))
	var wg sync.WaitGroup
	start := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.acquire()
			defer s.release()
			b := s.branch()
			outcomes[i].checks, outcomes[i].err = scs[i].run(b)
			outcomes[i].simulated = b.simulated
		}()
	}
	trunked := false
	for i, sc := range scs {
		if sc.name == ScenarioDayNight {
			start(i)
		} else {
			trunked = true
		}
	}
	if trunked {
		// A failed trunk is reported by the scenarios that start from it.
		s.acquire()
		_, _ = s.trunk()
		s.release()
		for i, sc := range scs {
			if sc.name != ScenarioDayNight {
				start(i)
			}
		}
	}
	wg.Wait()
	var out []Check
	for i, sc := range scs {
		o := outcomes[i]
		s.simulated += o.simulated
		var re *ruleError
		if errors.As(o.err, &re) {
			// The same broken rule would fail every later scenario: report
			// it once, where it first showed.
			return append(out, s.check(sc.name, "rules", "evaluate without error",
				fmt.Sprintf("at +%s: %v", model.FormatDuration(re.at), re.err), false)), nil
		}
		if o.err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.name, o.err)
		}
		out = append(out, o.checks...)
	}
	return out, nil
}

// acquire waits for a free core, when the run shares them out.
func (s *sloSim) acquire() {
	if s.cores != nil {
		s.cores <- struct{}{}
	}
}

func (s *sloSim) release() {
	if s.cores != nil {
		<-s.cores
	}
}

// ruleError is a rule that failed to evaluate during a scenario.
type ruleError struct {
	at  time.Duration
	err error
}

func (e *ruleError) Error() string { return e.err.Error() }

// silence runs a timeline and checks that none of the SLO's alerts fires.
func (s *sloSim) silence(scenario string, load traffic, restarts restart, end time.Duration, after func(*harness, *driver, time.Duration) error) ([]Check, error) {
	firstFire := map[alertKey]time.Duration{}
	err := s.run(load, restarts, end, func(t time.Duration, st map[alertKey]rules.AlertState) bool {
		for k, v := range st {
			if _, seen := firstFire[k]; !seen && v == rules.StateFiring {
				firstFire[k] = t
			}
		}
		return false
	}, after)
	if err != nil {
		return nil, err
	}
	var out []Check
	for _, k := range s.alertsOf() {
		obs, pass := "silent", true
		if t, fired := firstFire[k]; fired {
			obs, pass = "fired at +"+dur(t), false
			if t == 0 {
				obs = "fired at +0s"
			}
		}
		out = append(out, s.check(scenario, k.String(), "silent", obs, pass))
	}
	return out, nil
}

func constant(rps, burn float64) traffic {
	return func(time.Duration) (float64, float64) { return rps, burn }
}

// healthy: half the budget rate for as long as the page tier's longest
// window (at most 2h) plus the longest `for`: no alert may fire. Constant
// traffic looks the same to every window once they hold data, so a longer
// run adds nothing but time.
func (s *sloSim) healthy() ([]Check, error) {
	return s.silence(ScenarioHealthy, constant(1, healthyBurn), nil, s.healthySpan(), nil)
}

// healthySpan is how long the healthy scenario runs.
func (s *sloSim) healthySpan() time.Duration {
	span := 2 * time.Hour
	var maxFor time.Duration
	for _, t := range s.slo.Alerting.Tiers {
		if l := longest(t); l < span && t.Severity == "page" {
			span = l
		}
		if t.For > maxFor {
			maxFor = t.For
		}
	}
	return span + maxFor + s.slo.BaseWindow()
}

// warmup is the healthy history before a burn: the page tier's longest
// window, so page windows start full of healthy data.
func (s *sloSim) warmup() time.Duration {
	if t, ok := tierBySeverity(s.slo, "page"); ok {
		return roundUp(longest(t), s.scrape())
	}
	if len(s.slo.Alerting.Tiers) > 0 {
		return roundUp(s.slo.Alerting.Tiers[0].Windows[0].Short, s.scrape())
	}
	return 0
}

// burnScenario drives healthy traffic for warmup, then burn b until the
// alert of tier fires (or the deadline passes), then healthy again until it
// resolves. It checks the fire delay against the workbook prediction and,
// when resolve is set, the resolve time against its bound; silent lists
// alerts that must not fire at all.
func (s *sloSim) burnScenario(scenario string, tier model.Tier, b float64, resolve bool, silent []alertKey) ([]Check, error) {
	h := healthyBurn
	warm := s.warmup()
	detectT, ok := tierDetect(tier, warm, h, b, s.sliceLag(b))
	key := alertKey{model.AlertBurn, tier.Severity}
	if !ok {
		return []Check{s.check(scenario, key.String(), "fires", fmt.Sprintf("not checked: no pair of the spec fires at %.4gx", b), false)}, nil
	}
	base := s.slo.BaseWindow()
	if tier.Severity == model.OutageTier {
		// The outage tier reads its own window, not the base window.
		base = tier.Windows[0].Long
	}
	// The run's evaluation interval is only known once the group loads;
	// the spec's stands in for the prediction and the file's for the run.
	eval := s.slo.Evaluation
	if eval == 0 {
		eval = time.Minute
	}
	predicted := detectT + tier.For + base + eval
	bound := resolveBound(tier, h, b) + base + eval
	deadline := warm + 2*predicted
	var fired, resolvedAt time.Duration = -1, -1
	recoverAt := time.Duration(math.MaxInt64)
	silentFired := map[alertKey]time.Duration{}
	load := func(t time.Duration) (float64, float64) {
		if t > warm && t <= recoverAt {
			return 1, b
		}
		return 1, h
	}
	end := deadline
	if resolve {
		end += 2 * bound
	}
	err := s.run(load, nil, end, func(t time.Duration, st map[alertKey]rules.AlertState) bool {
		for _, k := range silent {
			if _, seen := silentFired[k]; !seen && st[k] == rules.StateFiring {
				silentFired[k] = t
			}
		}
		switch {
		case fired < 0 && st[key] == rules.StateFiring:
			fired = t
			recoverAt = t
			if !resolve {
				// Keep burning one `for` of the silent alerts, so a pending
				// one would have time to fire.
				return len(silent) == 0
			}
		case fired < 0 && t >= deadline:
			return true
		case fired >= 0 && resolve && st[key] != rules.StateFiring:
			resolvedAt = t
			return true
		case fired >= 0 && !resolve && t >= fired+s.maxFor():
			return true
		}
		return false
	}, nil)
	if err != nil {
		return nil, err
	}
	expected := fmt.Sprintf("fires within %s of a %.4gx burn", dur(predicted), b)
	if l := longest(tier); warm < l {
		// Warming windows of days would cost days of evaluations; the
		// prediction matches the replay, and a Prometheus whose windows
		// are full of healthy data takes longer, shown for the reader.
		expected += fmt.Sprintf(" (cold start: %s of healthy history", dur(warm))
		if full, ok := tierDetect(tier, l, h, b, s.sliceLag(b)); ok {
			expected += fmt.Sprintf("; with every window warm %s", dur(full+tier.For+base+eval))
		}
		expected += ")"
	}
	c := s.check(scenario, key.String(), expected, "", false)
	c.Predicted = predicted
	c.observeFire(fired, warm, deadline)
	out := []Check{c}
	if resolve && fired >= 0 {
		r := s.check(scenario, key.String(), fmt.Sprintf("resolves within %s of recovery", dur(bound)), "", false)
		r.ResolveBound = bound
		if resolvedAt < 0 {
			r.Observed = fmt.Sprintf("still firing %s after recovery", dur(end-fired))
		} else {
			r.Resolved = resolvedAt - fired
			r.Pass = r.Resolved <= bound
			r.Observed = "resolved after " + dur(r.Resolved)
		}
		out = append(out, r)
	}
	for _, k := range silent {
		obs, pass := "silent", true
		if t, ok := silentFired[k]; ok {
			obs, pass = "fired after "+dur(t-warm), false
		}
		out = append(out, s.check(scenario, k.String(), "silent", obs, pass))
	}
	return out, nil
}

// observeFire records when an alert fired (fired < 0: it did not by the
// deadline) after a burn that started at warm, against c.Predicted.
func (c *Check) observeFire(fired, warm, deadline time.Duration) {
	if fired < 0 {
		c.Observed = fmt.Sprintf("did not fire within %s", dur(deadline-warm))
		return
	}
	c.Delay = fired - warm
	c.Pass = c.Delay <= c.Predicted
	c.Observed = "fired after " + dur(c.Delay)
}

func (s *sloSim) maxFor() time.Duration {
	var out time.Duration
	for _, t := range s.slo.Alerting.Tiers {
		if t.For > out {
			out = t.For
		}
	}
	return out + s.slo.BaseWindow()
}

// fastBurn: twice the page tier's largest factor (kept below a 100% error
// ratio): the page fires no later than the workbook predicts and resolves
// after the burn stops.
func (s *sloSim) fastBurn() ([]Check, error) {
	page, ok := tierBySeverity(s.slo, "page")
	if !ok {
		return s.fastBurnWithoutPage()
	}
	return s.burnScenario(ScenarioFastBurn, page, s.fastFactor(factors(page)), true, s.outageSilent())
}

// fastFactor is twice the largest of a page tier's factors, kept below a
// 100% error ratio, and below the outage tier's factor: a fast burn is
// not an outage.
func (s *sloSim) fastFactor(pageFactors []float64) float64 {
	maxF := pageFactors[len(pageFactors)-1]
	ceiling := 1 / s.budget()
	if o := s.slo.Alerting.Outage; o != nil {
		ceiling = math.Min(ceiling, o.Windows[0].Factor.Float())
	}
	return math.Min(2*maxF, (maxF+ceiling)/2)
}

// fastBurnWithoutPage: an SLO without a page tier (the batch tier) under
// the burn that would page with the workbook's tiers: its ticket fires in
// time and nothing pages. The burn goes on until the ticket fires and one
// `for` longer; how fast a ticket resolves is not checked, as its windows
// take most of a day to drain.
func (s *sloSim) fastBurnWithoutPage() ([]Check, error) {
	ticket, ok := tierBySeverity(s.slo, "ticket")
	if !ok {
		return nil, nil
	}
	page, err := model.WorkbookTiersOf([]string{"page"}, s.slo.Window, 4*s.scrape(), s.slo.Evaluation)
	if err != nil {
		// The workbook's page windows do not fit this SLO; the slow burn
		// still proves the ticket.
		return nil, nil
	}
	b := s.fastFactor(factors(page[0]))
	return s.burnScenario(ScenarioFastBurn, ticket, b, false, []alertKey{{model.AlertBurn, "page"}})
}

// slowBurn: between the ticket tier's largest factor and the page tier's
// smallest (their geometric mean): the ticket fires, the page stays silent.
func (s *sloSim) slowBurn() ([]Check, error) {
	ticket, ok := tierBySeverity(s.slo, "ticket")
	if !ok {
		return nil, nil
	}
	tf := factors(ticket)
	b := 2 * tf[len(tf)-1]
	var silent []alertKey
	if page, ok := tierBySeverity(s.slo, "page"); ok {
		pf := factors(page)
		if pf[0] <= tf[len(tf)-1] {
			return []Check{s.check(ScenarioSlowBurn, "tiers", "page factors above ticket factors",
				fmt.Sprintf("page factor %g <= ticket factor %g", pf[0], tf[len(tf)-1]), false)}, nil
		}
		b = math.Sqrt(pf[0] * tf[len(tf)-1])
		silent = append(silent, alertKey{model.AlertBurn, "page"})
	}
	silent = append(silent, s.outageSilent()...)
	b = math.Min(b, (tf[len(tf)-1]+1/s.budget())/2)
	return s.burnScenario(ScenarioSlowBurn, ticket, b, false, silent)
}

// zeroTraffic: healthy, then no requests at all for three hours (counters
// flat, series present), then healthy again. No alert may fire, no recorded
// error ratio may ever be NaN, and every window's ratio must be back at the
// end.
func (s *sloSim) zeroTraffic() ([]Check, error) {
	lead := s.zeroLead()
	quiet := 3 * time.Hour
	end := lead + quiet + lead
	load := func(t time.Duration) (float64, float64) {
		if t > lead && t <= lead+quiet {
			return 0, 0
		}
		return 1, healthyBurn
	}
	var nan Check
	after := func(h *harness, d *driver, t time.Duration) error {
		sel := model.Selector(model.ErrorRatio, s.slo, 0)
		m, err := h.queryMatrix(fmt.Sprintf("%s[%s]", sel, model.FormatDuration(t+time.Minute)), t)
		if err != nil {
			return err
		}
		nans, samples := 0, 0
		for _, series := range m {
			for _, p := range series.Floats {
				samples++
				if math.IsNaN(p.F) {
					nans++
				}
			}
		}
		v, err := h.query(sel, t)
		if err != nil {
			return err
		}
		want := len(s.slo.Windows())
		if o := s.slo.Alerting.Outage; o != nil && o.Windows[0].Long != s.slo.BaseWindow() {
			want++ // the outage tier's own window
		}
		if s.slo.Calendar != nil {
			want++ // the calendar period so far
		}
		nan = s.check(ScenarioZeroTraffic, model.ErrorRatio, fmt.Sprintf("no NaN; all %d windows recorded after traffic returns", want),
			fmt.Sprintf("%d NaN in %d samples; %d windows recorded", nans, samples, len(v)), nans == 0 && len(v) == want)
		return nil
	}
	out, err := s.silence(ScenarioZeroTraffic, load, nil, end, after)
	if err != nil {
		return nil, err
	}
	return append(out, nan), nil
}

// zeroLead is the healthy traffic before and after the zero-traffic
// scenario's quiet hours.
func (s *sloSim) zeroLead() time.Duration { return max(time.Hour, 2*s.slo.BaseWindow()) }

// counterReset: healthy traffic while two pods restart (one misses a
// scrape and its counters start from zero again): no alert.
func (s *sloSim) counterReset() ([]Check, error) {
	span := s.resetSpan()
	scrape := s.scrape()
	// The first scrape at or after each restart time finds the pod down.
	at := func(when, t time.Duration) bool { return t >= when && t < when+scrape }
	restarts := func(pod int, t time.Duration) bool {
		return (pod == 0 && at(span/2, t)) || (pod == 1 && at(span*3/4, t))
	}
	return s.silence(ScenarioReset, constant(1, healthyBurn), restarts, span, nil)
}

// resetSpan is how long the counter-reset scenario runs; pods restart at
// half and three quarters of it.
func (s *sloSim) resetSpan() time.Duration { return 2 * time.Hour }

// dayNight: one period of day/night traffic (a day, or the SLO window if
// shorter), 1.8x swing between peak and trough, with errors concentrated in
// the quiet hours. Over one whole period the recorded SLO-window ratio must
// equal bad/total counted over the period within 0.1% (relative). The
// evaluations cover exactly one period, so the rate windows' overlap at
// both ends falls on the same phase of the cycle and cancels; windows longer
// than the simulated span (28d) count what exists, as in a fresh
// Prometheus; a window built from hourly tiles is read at a whole hour, a
// period after the first evaluation. The time-average of ratios is shown
// for contrast.
func (s *sloSim) dayNight() ([]Check, error) {
	period := s.period()
	cycle := func(t time.Duration) float64 { return math.Cos(2 * math.Pi * float64(t) / float64(period)) }
	scale := s.ratioScale()
	load := func(t time.Duration) (float64, float64) {
		quiet := (1 - cycle(t)) / 2
		burn := 0.05 + 1.9*quiet*quiet*quiet
		return scale * (1 + 0.9*cycle(t)), burn
	}
	// Only the SLO-window ratio and what it reads are evaluated: the
	// alerts play no part here, and the run is several times faster.
	window := model.FormatDuration(s.slo.Window)
	s.only = func(r *rules.RecordingRule) bool {
		return r.Name() == model.ErrorRatio && r.Labels().Get(model.LabelWindow) == window
	}
	defer func() { s.only = nil }()
	var c Check
	run := func() error {
		// A window built from tiles ends at the last whole tile: the run
		// ends on one, a period after the first evaluation.
		end := period - s.evalOrDefault()
		if irules.TileWindow(s.slo) > 0 {
			end = period
		}
		return s.run(load, nil, end, nil, func(h *harness, d *driver, t time.Duration) error {
			v, err := h.query(model.Selector(model.ErrorRatio, s.slo, s.slo.Window), t)
			if err != nil {
				return err
			}
			truth, ok := d.truth(-s.evalOrDefault(), t)
			weighting := "count-weighted"
			if s.slo.Timeslices != nil {
				truth, ok = s.sliceTruth(d, t)
				weighting = "mean of slices"
			}
			if !ok {
				return fmt.Errorf("day/night: no traffic in the period")
			}
			subject := model.Selector(model.ErrorRatio, s.slo, s.slo.Window)
			expected := fmt.Sprintf("%.6g (%s) ±0.1%%", truth, weighting)
			if len(v) != 1 {
				c = s.check(ScenarioDayNight, subject, expected, fmt.Sprintf("%d series", len(v)), false)
				return nil
			}
			got := v[0].F
			rel := math.Abs(got-truth) / truth
			avg := s.timeAverage(load, period)
			c = s.check(ScenarioDayNight, subject, expected,
				fmt.Sprintf("%.6g (off by %.3f%%; an average of ratios would give %.4g)", got, 100*rel, avg), rel <= 0.001)
			return nil
		})
	}
	if err := run(); err != nil {
		return nil, err
	}
	if s.slo.Calendar == nil {
		return []Check{c}, nil
	}
	p, err := s.periodRatio()
	if err != nil {
		return nil, err
	}
	return []Check{c, p}, nil
}

// periodSpan is how long the calendar period check's traffic cycle runs.
const periodSpan = time.Hour

// periodRatio checks a calendar SLO's period ratio: after one periodSpan
// cycle of traffic swinging 1.9x, its errors in the quiet part (half to 2.5
// times the budget rate, never a few bad requests that would alias with the
// rate windows), it must equal bad/total counted since the period began
// within 0.1%. The cycle spans exactly the tiles the period ratio keeps
// (from the first evaluation's, when the period began before the run), so
// the rate windows' extrapolation errs alike at both ends and cancels.
func (s *sloSim) periodRatio() (Check, error) {
	base := s.slo.BaseWindow()
	// firstTile is when the first tile the period ratio keeps begins:
	// tiles are recorded from the first evaluation on, each holding the
	// base window before it, and kept when they begin at or after the
	// period start.
	firstTile := func(start time.Time) time.Duration {
		end := max(start.Sub(epoch())+base, 0)
		if r := end % base; r != 0 {
			end += base - r
		}
		return end - base
	}
	start, _ := s.slo.Calendar.Bounds(epoch().Add(periodSpan))
	lead := firstTile(start)
	scale := s.ratioScale()
	load := func(t time.Duration) (float64, float64) {
		phase := math.Cos(2 * math.Pi * float64(t-lead) / float64(periodSpan))
		return scale * (1 + 0.9*phase), 1.5 - phase
	}
	label := irules.WindowLabel(s.slo)
	s.only = func(r *rules.RecordingRule) bool {
		return (r.Name() == model.ErrorRatio && r.Labels().Get(model.LabelWindow) == label) || r.Name() == irules.PeriodStart
	}
	defer func() { s.only = nil }()
	subject := fmt.Sprintf("%s{%s=%q,%s=%q}", model.ErrorRatio, model.LabelSLO, s.slo.Name, model.LabelWindow, label)
	var c Check
	err := s.run(load, nil, lead+periodSpan, nil, func(h *harness, d *driver, t time.Duration) error {
		recorded, err := h.query(model.Selector(irules.PeriodStart, s.slo, 0), t)
		if err != nil {
			return err
		}
		if len(recorded) != 1 {
			c = s.check(ScenarioDayNight, irules.PeriodStart, "one series", fmt.Sprintf("%d series", len(recorded)), false)
			return nil
		}
		truth, ok := d.truth(firstTile(time.Unix(int64(recorded[0].F), 0)), t)
		if !ok {
			return fmt.Errorf("day/night: no traffic in the calendar period")
		}
		v, err := h.query(subject, t)
		if err != nil {
			return err
		}
		expected := fmt.Sprintf("%.6g (count-weighted since the period began) ±0.1%%", truth)
		if len(v) != 1 {
			c = s.check(ScenarioDayNight, subject, expected, fmt.Sprintf("%d series", len(v)), false)
			return nil
		}
		rel := math.Abs(v[0].F-truth) / truth
		c = s.check(ScenarioDayNight, subject, expected, fmt.Sprintf("%.6g (off by %.3f%%)", v[0].F, 100*rel), rel <= 0.001)
		return nil
	})
	return c, err
}

// ratioScale scales the load of the ratio checks for enough traffic for
// dozens of bad requests per pod and scrape: whole counts of a few errors
// alias with the rate windows' sub-minute weighting and would blur the 0.1%
// comparison.
func (s *sloSim) ratioScale() float64 {
	return math.Max(1, 50/(s.opts.RPS*s.budget()*s.scrape().Seconds()))
}

// period is the day/night scenario's span: a day, or the SLO window if
// shorter.
func (s *sloSim) period() time.Duration { return min(24*time.Hour, s.slo.Window) }

func (s *sloSim) evalOrDefault() time.Duration {
	if s.slo.Evaluation > 0 {
		return s.slo.Evaluation
	}
	return time.Minute
}

// timeAverage is the error ratio averaged over time, each minute weighing
// the same: what an average of ratios would record.
func (s *sloSim) timeAverage(load traffic, period time.Duration) float64 {
	sum, n := 0.0, 0
	for t := time.Duration(0); t < period; t += time.Minute {
		_, burn := load(t)
		sum += burn * s.budget()
		n++
	}
	return sum / float64(n)
}
