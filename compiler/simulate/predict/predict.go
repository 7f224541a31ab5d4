package predict

import (
	"sort"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// windowBurn is the burn rate a window of length w sees t after a step from
// burn h to burn b, when only history of healthy data precedes the step
// (windows longer than the data average what exists, as avg_over_time does).
func windowBurn(w, t, history time.Duration, h, b float64) float64 {
	data := t + history
	if data > w {
		data = w
	}
	burnt := t
	if burnt > data {
		burnt = data
	}
	if data <= 0 {
		return h
	}
	return (b*burnt.Seconds() + h*(data-burnt).Seconds()) / data.Seconds()
}

// detect is the workbook detection time of one window pair: how long after
// the burn starts both of its windows exceed the factor. The burn a window
// sees grows monotonically, so a binary search finds the first second.
// ok is false when the pair never fires at this burn.
func detect(p model.WindowPair, history time.Duration, h, b float64) (time.Duration, bool) {
	f := p.Factor.Float()
	over := func(t time.Duration) bool {
		return windowBurn(p.Long, t, history, h, b) > f && windowBurn(p.Short, t, history, h, b) > f
	}
	limit := p.Long + history
	if !over(limit) {
		return 0, false
	}
	lo, hi := time.Duration(0), limit
	for hi-lo > time.Second {
		mid := lo + (hi-lo)/2
		if over(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// TierDetect is the fastest pair's detection time; lag, when given, adds
// a pair's own delay to its detection (whole slices of a time-slice SLO).
func TierDetect(t model.Tier, history time.Duration, h, b float64, lag func(model.WindowPair) time.Duration) (time.Duration, bool) {
	best, found := time.Duration(0), false
	for _, p := range t.Windows {
		d, ok := detect(p, history, h, b)
		if ok && lag != nil {
			d += lag(p)
		}
		if ok && (!found || d < best) {
			best, found = d, true
		}
	}
	return best, found
}

// ResolveBound is how long after a burn b stops (back to h) every pair's
// short window is below its factor, so the alert must have resolved.
func ResolveBound(t model.Tier, h, b float64) time.Duration {
	var worst time.Duration
	for _, p := range t.Windows {
		f := p.Factor.Float()
		if b <= f {
			continue
		}
		u := time.Duration(float64(p.Short) * (b - f) / (b - h))
		if u > worst {
			worst = u
		}
	}
	return worst
}

func TierBySeverity(slo model.SLO, severity string) (model.Tier, bool) {
	for _, t := range slo.Alerting.Tiers {
		if t.Severity == severity {
			return t, true
		}
	}
	return model.Tier{}, false
}

func Factors(t model.Tier) []float64 {
	var out []float64
	for _, p := range t.Windows {
		out = append(out, p.Factor.Float())
	}
	sort.Float64s(out)
	return out
}

func Longest(t model.Tier) time.Duration {
	var out time.Duration
	for _, p := range t.Windows {
		if p.Long > out {
			out = p.Long
		}
	}
	return out
}

func RoundUp(d, step time.Duration) time.Duration {
	if step <= 0 {
		return d
	}
	if r := d % step; r != 0 {
		d += step - r
	}
	return d
}
