package simulate

import (
	"fmt"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/model"
)

// goodputSeries builds one pod's series for an SLO on goodput's lower
// bound, whose bad events are the misses of two latency histograms added,
// (TTFT count − TTFT bucket) + (TPOT count − TPOT bucket), over the TTFT
// count. Every series counts every request (n), except the TTFT bucket at
// the threshold, which counts the fast ones (n − k): the k bad requests
// miss TTFT only, so bad = k and total = n, as every scenario needs.
func goodputSeries(slo model.SLO) ([]series, error) {
	if slo.SLI.Bad == nil || slo.SLI.Total == nil {
		return nil, fmt.Errorf("a goodput SLI needs a total and a bad query")
	}
	sels, err := selectorsOf(slo.SLI.Bad.Expr)
	if err != nil {
		return nil, err
	}
	var out []series
	slow := false
	for _, s := range sels {
		if s.native {
			return nil, fmt.Errorf("goodput over native histograms is not simulated")
		}
		v, err := satisfying(s.matchers)
		if err != nil {
			return nil, err
		}
		ls := labels.FromMap(v)
		seen := false
		for _, x := range out {
			seen = seen || labels.Equal(x.labels, ls)
		}
		if seen {
			continue
		}
		x := series{labels: ls, coefN: 1}
		if s.sign < 0 && !slow {
			x.coefK, slow = -1, true
		}
		out = append(out, x)
	}
	return out, nil
}
