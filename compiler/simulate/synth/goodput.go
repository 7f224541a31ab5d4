package synth

import (
	"fmt"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/model"
)

// goodputSeries builds one pod's series for an SLO on goodput's lower
// bound, whose bad events are the misses of two latency histograms added,
// (TTFT count − TTFT bucket) + (TPOT count − TPOT bucket), over the TTFT
// count. Every series counts every request (n), except the two buckets at
// the thresholds, which each count n − k/2: half of the k bad events miss
// TTFT and half TPOT, so bad = k and total = n, as every scenario needs,
// and each latency SLO reads half the goodput SLO's error ratio (a burn of
// the goodput SLO at its budget is no burn of theirs at exactly theirs).
func goodputSeries(slo model.SLO) ([]Series, error) {
	if slo.SLI.Bad == nil || slo.SLI.Total == nil {
		return nil, fmt.Errorf("a goodput SLI needs a total and a bad query")
	}
	sels, err := selectorsOf(slo.SLI.Bad.Expr)
	if err != nil {
		return nil, err
	}
	var out []Series
	slow := 0
	for _, s := range sels {
		if s.native {
			return nil, fmt.Errorf("goodput over native histograms is not simulated")
		}
		v, err := Satisfying(s.matchers)
		if err != nil {
			return nil, err
		}
		ls := labels.FromMap(v)
		seen := false
		for _, x := range out {
			seen = seen || labels.Equal(x.Labels, ls)
		}
		if seen {
			continue
		}
		x := Series{Labels: ls, CoefN: 1}
		if s.sign < 0 {
			x.coefK = -0.5
			slow++
		}
		out = append(out, x)
	}
	if slow != 2 {
		return nil, fmt.Errorf("a goodput SLI subtracts two threshold buckets, not %d", slow)
	}
	return out, nil
}
