package workload

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/prometheus/prometheus/storage"
)

// HealthyBurn is the burn rate of healthy traffic: half the budget rate.
const HealthyBurn = 0.5

// Driver feeds a workload's counters into the harness at scrape times.
type Driver struct {
	h        *prom.Harness
	Workload *synth.Workload
	budget   float64
	scrape   time.Duration
	// Next is the next scrape time; scrapes run from -prehistory on.
	Next       time.Duration
	prehistory time.Duration
	// cumulative (fractional) requests and bad requests per pod, the whole
	// counts exposed, and the counts at each pod's last restart.
	cumN, cumK     []float64
	intN, intK     []float64
	resetN, resetK []float64
	refs           []storage.SeriesRef
	// unread, when set, marks the series no rule of the harness reads:
	// they are counted, never stored.
	unread []bool
	// truth: whole requests and bad requests over all pods, per scrape.
	ledger []ledgerPoint
}

type ledgerPoint struct {
	t    time.Duration
	n, k float64
}

// Traffic is the load at simulated time t: requests per second per pod
// (pods get unequal shares around it) and the burn rate (error ratio over
// error budget).
type Traffic func(t time.Duration) (rps, burn float64)

// Restart says whether pod restarts (its counters start from zero) in the
// scrape interval ending at t.
type Restart func(pod int, t time.Duration) bool

func NewDriver(h *prom.Harness, w *synth.Workload, budget float64, scrape, prehistory time.Duration) *Driver {
	d := &Driver{h: h, Workload: w, budget: budget, scrape: scrape, Next: -prehistory, prehistory: prehistory}
	d.cumN = make([]float64, w.Pods)
	d.cumK = make([]float64, w.Pods)
	d.intN = make([]float64, w.Pods)
	d.intK = make([]float64, w.Pods)
	d.resetN = make([]float64, w.Pods)
	d.resetK = make([]float64, w.Pods)
	d.refs = make([]storage.SeriesRef, len(w.Series))
	return d
}

// PodShare spreads load unevenly over pods (0.5x to 1.5x), as a load
// balancer with warm and cold replicas would.
func PodShare(pod, pods int) float64 {
	if pods == 1 {
		return 1
	}
	return 0.5 + float64(pod)/float64(pods-1)
}

// Advance appends every scrape up to and including t.
func (d *Driver) Advance(t time.Duration, load Traffic, restarts Restart) error {
	return d.advance(t, load, restarts, true)
}

// OnlyRead makes d store only the series some rule of its harness reads
// (a threshold SLI's histogram has dozens of buckets, its rules read two):
// for runs that read nothing else.
func (d *Driver) OnlyRead() *Driver {
	reads := d.h.Reads()
	d.unread = make([]bool, len(d.Workload.Series))
	for i, s := range d.Workload.Series {
		d.unread[i] = !reads(s.Labels)
	}
	return d
}

// At is a driver in h, a Prometheus holding d's scrapes up to t (see
// prom.Harness.CopyAt), at its state after them: it counts the scrapes
// from the first again under load and restarts, which must be d's up to t,
// and appends the next ones.
func (d *Driver) At(h *prom.Harness, t time.Duration, load Traffic, restarts Restart) *Driver {
	nd := NewDriver(h, d.Workload, d.budget, d.scrape, d.prehistory)
	nd.unread = d.unread
	// Counting alone never fails.
	_ = nd.advance(t, load, restarts, false)
	return nd
}

// advance counts every scrape up to and including t and, when store is
// set, appends it.
func (d *Driver) advance(t time.Duration, load Traffic, restarts Restart, store bool) error {
	for ; d.Next <= t; d.Next += d.scrape {
		now := d.Next
		rps, burn := load(now)
		frac := math.Min(burn*d.budget, 1)
		sec := d.scrape.Seconds()
		down := make([]bool, d.Workload.Pods)
		for p := range d.cumN {
			d.cumN[p] += rps * PodShare(p, d.Workload.Pods) * sec
			d.cumK[p] += rps * PodShare(p, d.Workload.Pods) * sec * frac
			// Whole bad requests grow by at most the whole requests of the
			// scrape, so good counts (requests minus bad ones, as a bucket
			// below a latency threshold holds) never decrease when every
			// request fails and rounding would otherwise differ.
			n := math.Floor(d.cumN[p])
			d.intK[p] += min(math.Floor(d.cumK[p])-d.intK[p], n-d.intN[p])
			d.intN[p] = n
			if restarts != nil && restarts(p, now) {
				// The restarted pod misses this scrape and comes back from zero.
				d.resetN[p], d.resetK[p] = d.intN[p], d.intK[p]
				down[p] = true
			}
		}
		if store {
			if err := d.store(now, down); err != nil {
				return err
			}
		}
		var n, k float64
		for p := range d.cumN {
			n += d.intN[p]
			k += d.intK[p]
		}
		d.ledger = append(d.ledger, ledgerPoint{t: now, n: n, k: k})
	}
	return nil
}

// store appends the scrape at now, but for the pods down.
func (d *Driver) store(now time.Duration, down []bool) error {
	app := d.h.DB.Appender(context.Background())
	ms := prom.Epoch().Add(now).UnixMilli()
	for i, s := range d.Workload.Series {
		if down[s.Pod] || d.unread != nil && d.unread[i] {
			continue
		}
		n := d.intN[s.Pod] - d.resetN[s.Pod]
		k := d.intK[s.Pod] - d.resetK[s.Pod]
		var ref storage.SeriesRef
		var err error
		if v, hist := s.Sample(n, k); hist != nil {
			ref, err = app.AppendHistogram(d.refs[i], s.Labels, ms, hist, nil)
		} else {
			ref, err = app.Append(d.refs[i], s.Labels, ms, v)
		}
		if err != nil {
			app.Rollback()
			return fmt.Errorf("append synthetic sample: %w", err)
		}
		d.refs[i] = ref
	}
	if err := app.Commit(); err != nil {
		return fmt.Errorf("commit synthetic samples: %w", err)
	}
	return nil
}

// Truth is the count-weighted error ratio over scrapes in (from, to].
func (d *Driver) Truth(from, to time.Duration) (ratio float64, ok bool) {
	var first, last *ledgerPoint
	for i := range d.ledger {
		p := &d.ledger[i]
		if p.t <= from {
			first = p
		}
		if p.t <= to {
			last = p
		}
	}
	if first == nil || last == nil || last.n == first.n {
		return 0, false
	}
	return (last.k - first.k) / (last.n - first.n), true
}

func Constant(rps, burn float64) Traffic {
	return func(time.Duration) (float64, float64) { return rps, burn }
}

// CopyTo is a driver continuing d in h, a copy of d's harness.
func (d *Driver) CopyTo(h *prom.Harness) *Driver {
	nd := *d
	nd.h = h
	nd.cumN, nd.cumK = slices.Clone(d.cumN), slices.Clone(d.cumK)
	nd.intN, nd.intK = slices.Clone(d.intN), slices.Clone(d.intK)
	nd.resetN, nd.resetK = slices.Clone(d.resetN), slices.Clone(d.resetK)
	// Series references belong to the storage that issued them.
	nd.refs = make([]storage.SeriesRef, len(d.refs))
	nd.ledger = slices.Clone(d.ledger)
	return &nd
}
