// Package simulate proves an SLO's alerts by replaying synthetic engine
// metrics (package workload) through Prometheus' own rules manager and
// PromQL engine in process, in simulated time (package prom), against the
// workbook's predictions (package predict). It holds the proofs: the
// scenarios, what each must show, and the run budget they need.
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
// (trunk.go; a copy reads the frozen history beneath its own samples),
// and a burn goes on from a copy of its own run's Prometheus at the fire
// (prom.Harness.CopyAt). Only the series some rule reads are stored.
// Rules are evaluated span by span where they allow it
// (prom.Harness.EvalSpan: one range query per recording rule and span,
// the alerts step by step on those answers); where they do not, the
// day/night scenario evaluates each rule only at the steps its final
// reading depends on (prom.Schedule).
//
// The predicted alert delay is the workbook's detection time (first moment
// both windows of some pair exceed its factor, with the healthy history
// the windows hold) plus `for`, one base rate window (rate() lags by up to
// its range) and one evaluation interval.
package simulate

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
	"github.com/inferslo/inferslo/templates"
)

// Options tune a simulation run; the zero value uses the defaults.
type Options struct {
	// Shape of the synthetic workload; default 4 pods × 2 models.
	Shape synth.Shape
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
	o.Shape.Pods = cmp.Or(o.Shape.Pods, 4)
	o.Shape.Models = cmp.Or(o.Shape.Models, 2)
	o.RPS = cmp.Or(o.RPS, 10)
	o.Parallel = cmp.Or(o.Parallel, runtime.GOMAXPROCS(0))
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
	return runServices(set, opts, func(service model.ServiceSLOs) (map[string]prom.RuleIndex, error) {
		files, err := irules.Build(model.Set{SLOs: service.SLOs}, opts.Text)
		if err != nil {
			return nil, fmt.Errorf("compile rules: %w", err)
		}
		x, err := prom.IndexRules(files)
		if err != nil {
			return nil, err
		}
		return x.ByName(), nil
	})
}

// RunFiles simulates every SLO of the set against the given rule files
// (for example committed, possibly hand-edited artifacts). The SLO's group
// is found by its name (rules.GroupName); expectations come from the set.
func RunFiles(set model.Set, files artifact.Set, opts Options) (Result, error) {
	x, err := prom.IndexRules(files)
	if err != nil {
		return Result{}, err
	}
	byName := x.ByName()
	return runServices(set, opts, func(model.ServiceSLOs) (map[string]prom.RuleIndex, error) { return byName, nil })
}

// runServices simulates the SLOs service by service, opts.Parallel SLOs at
// once; rulesOf returns a service's rule groups by name when its turn comes.
// Results keep the set's order.
func runServices(set model.Set, opts Options, rulesOf func(model.ServiceSLOs) (map[string]prom.RuleIndex, error)) (Result, error) {
	opts = opts.withDefaults()
	start := time.Now()
	position := make(map[string]int, len(set.SLOs))
	for i, slo := range set.SLOs {
		position[slo.Name] = i
	}
	results := make([][]Check, len(set.SLOs))
	simulated := make([]time.Duration, len(set.SLOs))
	replays := make([][]Autoscaling, len(set.SLOs))
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
		byName = unannotated(byName)
		for _, slo := range service.SLOs {
			i := position[slo.Name]
			// Waiting here, not in the goroutine, keeps only the services
			// being replayed in memory.
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				own := byName[irules.GroupName(slo)]
				s := &sloSim{slo: slo, rules: withoutMaintenance(own), maintained: own, opts: opts, cores: cores,
					onlookers: onlookers(slo, service.SLOs), service: byName}
				results[i], errs[i] = s.all()
				simulated[i] = s.simulated
				replays[i] = s.replays
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
		res.Autoscaling = append(res.Autoscaling, replays[i]...)
		res.Simulated += simulated[i]
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// evaluation is how a simulation evaluates the rules (see
// prom.Harness.EvalSpan and prom.Schedule).
type evaluation int

const (
	// spans evaluates span by span where the rules allow it, else step by
	// step, a restricted run on its schedule.
	spans evaluation = iota
	// scheduled evaluates step by step, a restricted run on its schedule.
	scheduled
	// everyStep evaluates every rule at every step, as the rules manager
	// does.
	everyStep
)

// unannotated is the groups without their alerts' annotations. The rules
// manager expands every annotation's template for every alert at every
// evaluation, and no proof reads them: an alert's identity and state come
// from its labels and its query alone.
func unannotated(byName map[string]prom.RuleIndex) map[string]prom.RuleIndex {
	out := make(map[string]prom.RuleIndex, len(byName))
	for name, x := range byName {
		out[name] = x.Rewritten(func(r rulefmt.Rule) rulefmt.Rule {
			r.Annotations = nil
			return r
		})
	}
	return out
}

// sloSim runs the scenarios of one SLO.
type sloSim struct {
	slo model.SLO
	// rules is the SLO's group (more than one if files repeat its name),
	// its maintenance windows never open: every scenario but the
	// maintenance one proves the alerts whatever the hour.
	rules prom.RuleIndex
	// maintained is the group as written, windows and all.
	maintained prom.RuleIndex
	opts       Options
	simulated  time.Duration
	// eval is the group's interval as loaded from the file.
	eval time.Duration
	// only, when set, restricts the next run to the recordings it selects
	// and what they read.
	only func(*rules.RecordingRule) bool
	// likelyStops are the steps the next run likely stops at: its spans
	// end there.
	likelyStops []time.Duration
	// shared is the healthy history the scenarios start from.
	shared *workload.Trunk
	// planned, when set, makes runs only note the longest span asked for.
	planned *time.Duration
	// evaluation is how the rules are evaluated: span by span where they
	// can be, the default; the others are for tests comparing them.
	evaluation evaluation
	// cores, when set, holds a token per replay running, shared by all
	// SLOs of a run.
	cores chan struct{}
	// replays are the trace replays' figures.
	replays []Autoscaling
	// onlookers are the service's SLOs that read the counters this SLO
	// fails, and service the rule groups of the service by name.
	onlookers []model.SLO
	service   map[string]prom.RuleIndex
}

func (s *sloSim) scrape() time.Duration {
	return s.slo.Scrape()
}

func (s *sloSim) budget() float64 { return s.slo.ErrorBudget().Float() }

// lag is how late, at most, the rules keep selects give their value when
// the SLO's group is chained into parts (rules.Links): a whole number of
// evaluation intervals, 0 for one group.
func (s *sloSim) lag(keep func(rulefmt.Rule) bool) (time.Duration, error) {
	groups := s.rules.Groups()
	if len(groups) < 2 {
		return 0, nil
	}
	links, err := irules.Links(groups)
	if err != nil {
		return 0, err
	}
	most := 0
	for i, g := range groups {
		for j, r := range g.Rules {
			if keep(r) {
				most = max(most, links[i][j])
			}
		}
	}
	return time.Duration(most) * s.evalOrDefault(), nil
}

// groupName is the name of the SLO's rule group.
func (s *sloSim) groupName() string { return irules.GroupName(s.slo) }

// prehistory is how long scrapes run before the first evaluation, so the
// base window holds data from the start.
func (s *sloSim) prehistory() time.Duration { return s.slo.BaseWindow() + 2*s.scrape() }

// scaled is the load as the driver sends it: in whole bad slices for a
// time-slice SLO, at opts.RPS. Each call returns a fresh load, as a sliced
// one keeps state.
func (s *sloSim) scaled(load workload.Traffic) workload.Traffic {
	if ts := s.slo.Timeslices; ts != nil && !ts.Average {
		load = s.slicedLoad(load)
	}
	return func(t time.Duration) (float64, float64) {
		rps, burn := load(t)
		return rps * s.opts.RPS, burn
	}
}

// alertsOf lists the alerts the SLO's spec says its rules have.
func (s *sloSim) alertsOf() []prom.AlertKey {
	var out []prom.AlertKey
	for _, t := range s.slo.Alerting.Tiers {
		out = append(out, prom.AlertKey{Name: model.AlertBurn, Severity: t.Severity})
	}
	if s.slo.Alerting.Outage != nil {
		out = append(out, outageKey)
	}
	if s.slo.Alerting.NoData {
		out = append(out, prom.AlertKey{Name: model.AlertNoData, Severity: model.TicketTier})
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
		s.shared.Close()
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
		if _, err := synth.New(s.slo, s.opts.Shape); err != nil {
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

// branch is a simulation of the same SLO for one scenario run beside the
// others: it shares the trunk, not the fields a run sets.
func (s *sloSim) branch() *sloSim {
	return &sloSim{slo: s.slo, rules: s.rules, maintained: s.maintained, opts: s.opts, eval: s.eval, shared: s.shared,
		onlookers: s.onlookers, service: s.service, evaluation: s.evaluation}
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
		replays   []Autoscaling
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
			outcomes[i].replays = b.replays
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
		s.replays = append(s.replays, o.replays...)
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

// evalError is err, from prom.Harness.EvalSpan, as a ruleError when a rule
// failed: broken rules are a finding about the rule file, not a failure
// of the simulator.
func evalError(err error) error {
	var ee *prom.EvalError
	if errors.As(err, &ee) {
		return &ruleError{at: ee.At, err: ee.Err}
	}
	return err
}

// periodSpan is how long the calendar period check's traffic cycle runs.
const periodSpan = time.Hour
