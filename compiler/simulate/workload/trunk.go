package workload

import (
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/prometheus/prometheus/rules"
)

// Trunk is the healthy history that every scenario but day/night starts
// with, replayed once per SLO. A scenario replays the trunk's alert states
// for as long as its own traffic is the trunk's, then carries on from a copy
// of the Prometheus taken at or before the step where they part: the same
// samples, recorded series, staleness and alert state as a replay from zero
// would have reached, for a fraction of the evaluations.
type Trunk struct {
	Eval time.Duration
	// Load is the scaled traffic of each scrape from -prehistory on.
	Load [][2]float64
	// States are the alert states after each evaluation, from 0 in steps
	// of eval.
	States []map[prom.AlertKey]rules.AlertState
	// Err is what stopped the trunk at evaluation len(states); a rule
	// error is a finding the scenarios sharing that step report.
	Err   error
	Snaps []Snapshot
}

// Snapshot is a copy of the trunk's Prometheus and driver after the
// evaluation at step at.
type Snapshot struct {
	At time.Duration
	H  *prom.Harness
	D  *Driver
}

// Close releases the copies.
func (tr *Trunk) Close() {
	for _, s := range tr.Snaps {
		s.H.Close()
	}
}

// Replayed is how far a run can follow the trunk: it returns the alert
// states of the steps it shares (up to end), the latest copy within them, if
// any, and whether the run shares the step where the trunk stopped on
// tr.err. A step is shared when every scrape up to it sends the trunk's
// traffic without restarts.
func (tr *Trunk) Replayed(load Traffic, restarts Restart, end, scrape, prehistory time.Duration, pods int) (states []map[prom.AlertKey]rules.AlertState, snap *Snapshot, stops bool) {
	// Scrapes run from -prehistory in steps of scrape; the evaluation at t
	// sees the scrapes at or before it.
	differs := time.Duration(math.MaxInt64)
	for i, want := range tr.Load {
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
	for i, st := range tr.States {
		t := time.Duration(i) * tr.Eval
		if t > end || t >= differs {
			break
		}
		states = append(states, st)
	}
	for i := range tr.Snaps {
		if last := time.Duration(len(states)-1) * tr.Eval; tr.Snaps[i].At <= last {
			snap = &tr.Snaps[i]
		}
	}
	stop := time.Duration(len(tr.States)) * tr.Eval
	return states, snap, tr.Err != nil && len(states) == len(tr.States) && stop <= end && stop < differs
}

// CopyOf starts a Prometheus holding h's samples and group state and a
// driver continuing d there (see prom.Harness.Copy). It declines (ok
// false) while an alert is pending or firing: alert instances would be
// shared between the copies.
func CopyOf(h *prom.Harness, d *Driver, x prom.RuleIndex, frozen bool) (c Snapshot, ok bool, err error) {
	n, ok, err := h.Copy(x, frozen)
	if !ok || err != nil {
		return Snapshot{}, ok, err
	}
	return Snapshot{At: -1, H: n, D: d.CopyTo(n)}, true, nil
}
