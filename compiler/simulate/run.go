package simulate

import (
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
)

// run replays one timeline from 0 to end in evaluation steps; each sees the
// alert states after every evaluation and may stop the run early (when
// after is set, not at the steps it shares with the trunk, where no
// Prometheus of its own holds the state); after sees the Prometheus and
// driver at the last evaluation. Steps
// whose scrapes all match the trunk's (healthy traffic, no restarts) are
// the trunk's, not replayed again.
func (s *sloSim) run(load workload.Traffic, restarts workload.Restart, end time.Duration,
	each func(t time.Duration, st map[prom.AlertKey]rules.AlertState) bool, after func(*prom.Harness, *workload.Driver, time.Duration) error) error {
	if s.planned != nil {
		*s.planned = max(*s.planned, end)
		return nil
	}
	if each == nil {
		each = func(time.Duration, map[prom.AlertKey]rules.AlertState) bool { return false }
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
	states, snap, stops := tr.Replayed(s.scaled(load), restarts, end, s.scrape(), s.prehistory(), s.opts.Shape.Pods)
	last := time.Duration(len(states)-1) * tr.Eval
	full := len(states) > 0 && last+tr.Eval > end
	if stops {
		// The run reaches the step where the trunk stopped, with the same
		// traffic.
		for i, st := range states {
			if each(time.Duration(i)*tr.Eval, st) {
				return nil
			}
		}
		return tr.Err
	}
	if !full || after != nil {
		if snap == nil {
			return s.replay(load, restarts, end, each, after)
		}
		states = states[:snap.At/tr.Eval+1]
	}
	for i, st := range states {
		if each(time.Duration(i)*tr.Eval, st) && after == nil {
			return nil
		}
	}
	if full && after == nil {
		return nil
	}
	// The trunk's copies are frozen once it has run.
	c, ok, err := workload.CopyOf(snap.H, snap.D, s.rules, true)
	if err != nil {
		return err
	}
	if !ok {
		return s.replay(load, restarts, end, each, after)
	}
	defer c.H.Close()
	// The load starts over with the trunk's scrapes: a sliced one counts
	// slices from its first call.
	scaled := s.scaled(load)
	for at := -s.prehistory(); at < c.D.Next; at += s.scrape() {
		scaled(at)
	}
	return s.steps(c.H, c.D, scaled, restarts, snap.At+tr.Eval, end, each, after)
}

// replay runs a timeline from zero in a Prometheus of its own.
func (s *sloSim) replay(load workload.Traffic, restarts workload.Restart, end time.Duration,
	each func(t time.Duration, st map[prom.AlertKey]rules.AlertState) bool, after func(*prom.Harness, *workload.Driver, time.Duration) error) error {
	h, err := prom.NewIndexedHarness(s.rules, false, s.opts.Scratch)
	if err != nil {
		return err
	}
	defer h.Close()
	h.Stepwise = s.evaluation != spans
	if len(h.Groups) == 0 {
		return &ruleError{err: fmt.Errorf("no rule group %s in the rule files", s.groupName())}
	}
	s.eval = h.Groups[0].Interval()
	if err := s.checkSteps(end, s.prehistory()); err != nil {
		return err
	}
	if s.only != nil {
		h.Restrict(s.only)
		// Spans evaluate every step for less than the schedule's steps.
		if s.evaluation != everyStep && !h.Spans() {
			if sc, ok := prom.NewSchedule(h.Groups, s.eval, end, s.only); ok {
				h.Sched = sc
			}
		}
	}
	w, err := synth.New(s.slo, s.opts.Shape)
	if err != nil {
		return err
	}
	d := workload.NewDriver(h, w, s.budget(), s.scrape(), s.prehistory()).OnlyRead()
	return s.steps(h, d, s.scaled(load), restarts, 0, end, each, after)
}

// steps evaluates from start to end in evaluation steps.
func (s *sloSim) steps(h *prom.Harness, d *workload.Driver, load workload.Traffic, restarts workload.Restart, start, end time.Duration,
	each func(t time.Duration, st map[prom.AlertKey]rules.AlertState) bool, after func(*prom.Harness, *workload.Driver, time.Duration) error) error {
	last, err := s.evalSpans(h, start, end, func(t time.Duration) error { return d.Advance(t, load, restarts) },
		func(t time.Duration) bool { return each(t, h.AlertStates()) })
	if err != nil {
		return evalError(err)
	}
	s.simulated += last - start + s.eval
	if after != nil {
		return after(h, d, last)
	}
	return nil
}

// evalSpans is h.EvalSpan from start to end, span by span where the
// rules allow it, a span ending at each of s.likelyStops within too: a run
// that stops there evaluates little past it.
func (s *sloSim) evalSpans(h *prom.Harness, start, end time.Duration, advance func(time.Duration) error, each func(time.Duration) bool) (time.Duration, error) {
	last, stopped := start-s.eval, false
	for _, to := range append(slices.Sorted(slices.Values(s.likelyStops)), end) {
		if stopped || to < last+s.eval || to > end {
			continue
		}
		l, err := h.EvalSpan(last+s.eval, to, advance, func(t time.Duration) bool {
			stopped = each(t)
			return stopped
		})
		if err != nil {
			return l, err
		}
		last = l
	}
	return last, nil
}

// The intervals CheckBudget may name.
const (
	EvaluationInterval Interval = "evaluation"
	ScrapeInterval     Interval = "scrape"
)
