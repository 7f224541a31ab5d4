package simulate

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/workload"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// trunk is the healthy history that every scenario but day/night starts
// with, replayed once per SLO. A scenario replays the trunk's alert states
// for as long as its own traffic is the trunk's, then carries on from a copy
// of the Prometheus taken at or before the step where they part: the same
// samples, recorded series, staleness and alert state as a replay from zero
// would have reached, for a fraction of the evaluations.
type trunk struct {
	eval time.Duration
	// load is the scaled traffic of each scrape from -prehistory on.
	load [][2]float64
	// states are the alert states after each evaluation, from 0 in steps
	// of eval.
	states []map[prom.AlertKey]rules.AlertState
	// err is what stopped the trunk at evaluation len(states); a rule
	// error is a finding the scenarios sharing that step report.
	err   error
	snaps []snapshot
}

// snapshot is a copy of the trunk's Prometheus and driver after the
// evaluation at step at.
type snapshot struct {
	at time.Duration
	h  *prom.Harness
	d  *workload.Driver
}

func (tr *trunk) close() {
	for _, s := range tr.snaps {
		s.h.Close()
	}
}

// trunkSpan is how long the trunk runs and where it is copied: at the last
// healthy step of each scenario that departs from it.
func (s *sloSim) trunkSpan() (end time.Duration, copies []time.Duration) {
	want := func(name string) bool { return len(s.opts.Scenarios) == 0 || slices.Contains(s.opts.Scenarios, name) }
	if want(ScenarioHealthy) {
		end = s.healthySpan()
	}
	if want(ScenarioFastBurn) || want(ScenarioSlowBurn) {
		copies = append(copies, s.warmup())
	}
	if want(ScenarioZeroTraffic) {
		copies = append(copies, s.zeroLead())
	}
	if want(ScenarioReset) {
		// The first restart's scrape is the first that differs.
		copies = append(copies, s.resetSpan()/2-1)
	}
	for _, c := range copies {
		end = max(end, c)
	}
	return end, copies
}

// trunk replays the healthy history once, on first use.
func (s *sloSim) trunk() (*trunk, error) {
	if s.shared != nil {
		return s.shared, nil
	}
	end, copies := s.trunkSpan()
	h, err := prom.NewIndexedHarness(s.rules, false, s.opts.Scratch)
	if err != nil {
		return nil, err
	}
	if len(h.Groups) == 0 {
		h.Close()
		return nil, &ruleError{err: fmt.Errorf("no rule group %s in the rule files", s.groupName())}
	}
	tr := &trunk{eval: h.Groups[0].Interval()}
	s.shared = tr
	s.eval = tr.eval
	w, err := workload.New(s.slo, s.opts.Shape)
	if err == nil {
		err = s.checkSteps(end, s.prehistory())
	}
	if err != nil {
		h.Close()
		tr.err = err
		return tr, nil
	}
	d := workload.NewDriver(h, w, s.budget(), s.scrape(), s.prehistory())
	load := s.scaled(workload.Constant(1, workload.HealthyBurn))
	recorded := func(t time.Duration) (float64, float64) {
		rps, burn := load(t)
		tr.load = append(tr.load, [2]float64{rps, burn})
		return rps, burn
	}
	for i := range copies {
		copies[i] -= copies[i] % tr.eval
	}
	slices.Sort(copies)
	copies = slices.Compact(copies)
	for t := time.Duration(0); t <= end; t += tr.eval {
		if err := d.Advance(t, recorded, nil); err != nil {
			tr.err = err
			break
		}
		if err := h.Eval(t); err != nil {
			tr.err = &ruleError{at: t, err: err}
			break
		}
		tr.states = append(tr.states, h.AlertStates())
		if len(copies) == 0 || copies[0] != t {
			continue
		}
		copies = copies[1:]
		if len(copies) == 0 && t+tr.eval > end {
			// The last copy is the trunk itself.
			tr.snaps = append(tr.snaps, snapshot{at: t, h: h, d: d})
			h = nil
			break
		}
		c, ok, err := copyOf(h, d, s.rules)
		if err != nil {
			tr.err = err
			break
		}
		if ok {
			c.at = t
			tr.snaps = append(tr.snaps, c)
		}
	}
	if h != nil {
		h.Close()
	}
	s.simulated += time.Duration(len(tr.states)) * tr.eval
	return tr, nil
}

// replayed is how far a run can follow the trunk: it returns the alert
// states of the steps it shares (up to end), the latest copy within them, if
// any, and whether the run shares the step where the trunk stopped on
// tr.err. A step is shared when every scrape up to it sends the trunk's
// traffic without restarts.
func (tr *trunk) replayed(load workload.Traffic, restarts workload.Restart, end, scrape, prehistory time.Duration, pods int) (states []map[prom.AlertKey]rules.AlertState, snap *snapshot, stops bool) {
	// Scrapes run from -prehistory in steps of scrape; the evaluation at t
	// sees the scrapes at or before it.
	differs := time.Duration(math.MaxInt64)
	for i, want := range tr.load {
		at := -prehistory + time.Duration(i)*scrape
		rps, burn := load(at)
		down := false
		for p := 0; restarts != nil && p < pods; p++ {
			down = down || restarts(p, at)
		}
		if rps != want[0] || burn != want[1] || down {
			differs = at
			break
		}
	}
	for i, st := range tr.states {
		t := time.Duration(i) * tr.eval
		if t > end || t >= differs {
			break
		}
		states = append(states, st)
	}
	for i := range tr.snaps {
		if last := time.Duration(len(states)-1) * tr.eval; tr.snaps[i].at <= last {
			snap = &tr.snaps[i]
		}
	}
	stop := time.Duration(len(tr.states)) * tr.eval
	return states, snap, tr.err != nil && len(states) == len(tr.states) && stop <= end && stop < differs
}

// copyOf starts a Prometheus holding h's samples and group state and a
// driver continuing d there. It declines (ok false) while an alert is
// pending or firing: alert instances would be shared between the copies.
func copyOf(h *prom.Harness, d *workload.Driver, x prom.RuleIndex) (c snapshot, ok bool, err error) {
	for _, st := range h.AlertStates() {
		if st != rules.StateInactive {
			return snapshot{}, false, nil
		}
	}
	n, err := prom.NewIndexedHarness(x, h.Counted != nil, filepath.Dir(h.Dir))
	if err != nil {
		return snapshot{}, false, err
	}
	if err := copySamples(h, n); err != nil {
		n.Close()
		return snapshot{}, false, err
	}
	if len(n.Groups) != len(h.Groups) {
		n.Close()
		return snapshot{}, false, fmt.Errorf("copy of the rule groups has %d groups, not %d", len(n.Groups), len(h.Groups))
	}
	for i, g := range n.Groups {
		g.CopyState(h.Groups[i])
	}
	return snapshot{at: -1, h: n, d: d.CopyTo(n)}, true, nil
}

// copySamples appends every sample of from's storage to to's.
func copySamples(from, to *prom.Harness) error {
	ctx := context.Background()
	q, err := from.DB.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return fmt.Errorf("copy simulation storage: %w", err)
	}
	defer q.Close()
	set := q.Select(ctx, false, nil, labels.MustNewMatcher(labels.MatchRegexp, query.MetricNameLabel, ".+"))
	app := to.DB.Appender(ctx)
	var it chunkenc.Iterator
	for set.Next() {
		series := set.At()
		lset := series.Labels()
		it = series.Iterator(it)
		var ref storage.SeriesRef
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			switch vt {
			case chunkenc.ValFloat:
				ts, v := it.At()
				ref, err = app.Append(ref, lset, ts, v)
			case chunkenc.ValHistogram:
				ts, hist := it.AtHistogram(nil)
				ref, err = app.AppendHistogram(ref, lset, ts, hist, nil)
			case chunkenc.ValFloatHistogram:
				ts, fh := it.AtFloatHistogram(nil)
				ref, err = app.AppendHistogram(ref, lset, ts, nil, fh)
			}
			if err != nil {
				app.Rollback()
				return fmt.Errorf("copy simulation storage: %w", err)
			}
		}
		if err := it.Err(); err != nil {
			app.Rollback()
			return fmt.Errorf("copy simulation storage: %w", err)
		}
	}
	if err := set.Err(); err != nil {
		app.Rollback()
		return fmt.Errorf("copy simulation storage: %w", err)
	}
	if err := app.Commit(); err != nil {
		return fmt.Errorf("copy simulation storage: %w", err)
	}
	return nil
}
