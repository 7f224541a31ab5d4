package simulate

import (
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
)

// slicedLoad turns a load's burn into whole bad slices for Timeslices: a
// share r = burn × budget of slices is bad, spread evenly by a running sum
// (slice i is bad when the sum of r up to it passes a whole number), and a
// bad slice fails every request while a good one fails none. The burn is read
// at each slice's end, so a slice is all good or all bad. Slice i spans
// ((i-1)·slice, i·slice], what the rules evaluated at i·slice read. The
// result keeps state: calls must come in time order, as scrapes do.
//
// A threshold SLI evaluated several times per slice reads, at each
// evaluation, the scrapes of its query's range, which reaches back into the
// slice before. A bad slice then fails only its first stretch: every
// evaluation of the slice reads some of it, and none of the next slice's
// does, so one bad slice of requests is one bad slice of evaluations.
func (s *sloSim) slicedLoad(load workload.Traffic) workload.Traffic {
	slice := s.slo.Timeslices.Window
	stretch := s.badStretch()
	var last int64
	var sum float64
	bad, started := false, false
	return func(t time.Duration) (float64, float64) {
		i := -int64(math.Floor(-float64(t) / float64(slice)))
		if !started {
			last, started = i-1, true
		}
		for ; last < i; last++ {
			_, burn := load(time.Duration(last+1) * slice)
			prev := sum
			sum += burn * s.budget()
			bad = math.Floor(sum) > math.Floor(prev)
		}
		rps, _ := load(t)
		if bad && t-time.Duration(i-1)*slice <= stretch {
			return rps, 1 / s.budget()
		}
		return rps, 0
	}
}

// badStretch is how much of a bad slice fails, from its start: the whole
// slice, or for a threshold SLI with E-spaced evaluations reading a range R
// the scrapes up to slice + E + scrape − R in (the scrape ending there is
// the last the next slice's first evaluation, at slice + E, leaves out).
// Shorter than one scrape, it holds no scrape: such a range (longer than
// slice + E) cannot be replayed.
func (s *sloSim) badStretch() time.Duration {
	ts, th := s.slo.Timeslices, s.slo.SLI.Threshold
	if th == nil || ts.Evaluation == 0 {
		return ts.Window
	}
	return min(ts.Window, ts.Window+ts.Evaluation+s.scrape()-th.Range)
}

// evaluationsTruth is a slice's error for a threshold SLI evaluated several
// times per slice, ending at t: each evaluation with traffic is good when the
// share of bad requests in the scrapes its range reads is at most 1 − φ (the
// quantile then falls in the good bucket), and the slice is bad when the
// share of good evaluations is below timeSliceTarget.
func (s *sloSim) evaluationsTruth(d *workload.Driver, t time.Duration) (float64, bool) {
	ts, th := s.slo.Timeslices, s.slo.SLI.Threshold
	good, n := 0, 0
	for e := t - ts.Window + ts.Evaluation; e <= t; e += ts.Evaluation {
		r, ok := d.Truth(e-th.Range+s.scrape(), e)
		if !ok {
			continue
		}
		n++
		if r <= 1-th.Quantile {
			good++
		}
	}
	if n == 0 {
		return 0, false
	}
	if float64(good)/float64(n) < ts.Target.Float() {
		return 1, true
	}
	return 0, true
}

// sliceTruth is what the SLO-window error ratio of a time-slice SLO must be
// after evaluations at 0, slice, …, end, over the slices that begin at or
// after from (a calendar period's): the mean over slices of each
// slice's error, counted from the requests the driver sent within the
// scrapes its rates read. A Timeslices slice is bad when most of its
// requests failed (sliceBurn makes slices all good or all bad).
func (s *sloSim) sliceTruth(d *workload.Driver, from, end time.Duration) (float64, bool) {
	ts := s.slo.Timeslices
	sum, n := 0.0, 0
	for t := time.Duration(0); t <= end; t += ts.Window {
		if t-ts.Window < from {
			continue
		}
		r, ok := d.Truth(t-ts.Window+s.scrape(), t)
		if s.slo.SLI.Threshold != nil && ts.Evaluation > 0 {
			r, ok = s.evaluationsTruth(d, t)
		}
		if !ok {
			continue
		}
		if !ts.Average {
			r = math.Round(r)
		}
		sum += r
		n++
	}
	return sum / float64(n), n > 0
}

// sliceLag is how much later than the workbook's continuous model a pair
// of a Timeslices SLO detects a burn b: its windows count whole bad slices,
// which trail the continuous count (the running sum of slicedLoad) by less
// than one slice; the excess of the burn over the pair's factor,
// (b − factor) × budget bad slices per slice, makes that up. Nil for other
// SLOs.
func (s *sloSim) sliceLag(b float64) func(model.WindowPair) time.Duration {
	ts := s.slo.Timeslices
	if ts == nil || ts.Average {
		return nil
	}
	return func(p model.WindowPair) time.Duration {
		excess := (b - p.Factor.Float()) * s.budget()
		return time.Duration(math.Ceil(1/excess) * float64(ts.Window))
	}
}
