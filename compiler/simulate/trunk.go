package simulate

import (
	"fmt"
	"slices"
	"time"

	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
)

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
func (s *sloSim) trunk() (*workload.Trunk, error) {
	if s.shared != nil {
		return s.shared, nil
	}
	end, copies := s.trunkSpan()
	h, err := prom.NewIndexedHarness(s.rules, false, s.opts.Scratch)
	if err != nil {
		return nil, err
	}
	h.Stepwise = s.evaluation != spans
	if len(h.Groups) == 0 {
		h.Close()
		return nil, &ruleError{err: fmt.Errorf("no rule group %s in the rule files", s.groupName())}
	}
	tr := &workload.Trunk{Eval: h.Groups[0].Interval()}
	s.shared = tr
	s.eval = tr.Eval
	w, err := synth.New(s.slo, s.opts.Shape)
	if err == nil {
		err = s.checkSteps(end, s.prehistory())
	}
	if err != nil {
		h.Close()
		tr.Err = err
		return tr, nil
	}
	d := workload.NewDriver(h, w, s.budget(), s.scrape(), s.prehistory()).OnlyRead()
	load := s.scaled(workload.Constant(1, workload.HealthyBurn))
	recorded := func(t time.Duration) (float64, float64) {
		rps, burn := load(t)
		tr.Load = append(tr.Load, [2]float64{rps, burn})
		return rps, burn
	}
	for i := range copies {
		copies[i] -= copies[i] % tr.Eval
	}
	slices.Sort(copies)
	copies = slices.Compact(copies)
	advance := func(t time.Duration) error { return d.Advance(t, recorded, nil) }
	state := func(time.Duration) bool {
		tr.States = append(tr.States, h.AlertStates())
		return false
	}
	// Spans end at the copies.
	for t := time.Duration(0); t <= end; {
		stop := end
		if len(copies) > 0 {
			stop = copies[0]
		}
		last, err := h.EvalSpan(t, stop, advance, state)
		if err != nil {
			tr.Err = evalError(err)
			break
		}
		t = last + tr.Eval
		if len(copies) == 0 || copies[0] != last {
			continue
		}
		copies = copies[1:]
		if len(copies) == 0 && t > end {
			// The last copy is the trunk itself.
			tr.Snaps = append(tr.Snaps, workload.Snapshot{At: last, H: h, D: d})
			h = nil
			break
		}
		c, ok, err := workload.CopyOf(h, d, s.rules, false)
		if err != nil {
			tr.Err = err
			break
		}
		if ok {
			c.At = last
			tr.Snaps = append(tr.Snaps, c)
		}
	}
	if h != nil {
		h.Close()
	}
	s.simulated += time.Duration(len(tr.States)) * tr.Eval
	return tr, nil
}
