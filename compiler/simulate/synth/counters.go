package synth

import (
	"fmt"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/model"
)

// Counter is one synthetic counter of a single pod serving the SLO's model:
// it grows by PerRequest for every request and by PerBad more for every bad
// one (slow for a latency SLI, failed for the errors SLI).
type Counter struct {
	Labels     labels.Labels
	PerRequest float64
	PerBad     float64
	// native makes the counter a native histogram at schema (PerRequest
	// and PerBad are then zero): see series.hist.
	native []observation
	schema int
}

// Native tells whether the counter is a native histogram.
func (c Counter) Native() bool { return c.native != nil }

// Value is a float counter's value after n requests and k bad ones.
func (c Counter) Value(n, k float64) float64 { return c.PerRequest*n + c.PerBad*k }

// Histogram is a native histogram counter's value after n requests and k
// bad ones.
func (c Counter) Histogram(n, k float64) *histogram.Histogram { return c.series().histogram(n, k) }

func (c Counter) series() Series {
	return Series{Labels: c.Labels, CoefN: c.PerRequest, coefK: c.PerBad, hist: c.native, schema: c.schema}
}

// Input is a counter that grows by N requests and K bad ones per scrape.
type Input struct {
	Counter Counter
	N, K    float64
}

// Counters returns the counters of one pod that the SLO's queries select,
// shaped like the engine's own series; the SLI over them is exactly
// bad requests / requests.
func Counters(slo model.SLO) ([]Counter, error) {
	w, err := New(slo, Shape{Pods: 1, Models: 1})
	if err != nil {
		return nil, err
	}
	var sels []selector
	for _, q := range []*model.Query{slo.SLI.Total, slo.SLI.Good, slo.SLI.Bad} {
		if q == nil {
			continue
		}
		s, err := selectorsOf(q.Expr)
		if err != nil {
			return nil, err
		}
		sels = append(sels, s...)
	}
	var out []Counter
	for _, s := range w.Series {
		for _, sel := range sels {
			if sel.matches(s.Labels) {
				out = append(out, Counter{Labels: s.Labels, PerRequest: s.CoefN, PerBad: s.coefK, native: s.hist, schema: s.schema})
				break
			}
		}
	}
	return out, nil
}

// Events is how many events and bad events the SLO's SLI counts when each
// input grows as it says: each selector of the queries adds (or,
// subtracted, removes) what the series it matches count.
func Events(slo model.SLO, inputs []Input) (total, bad float64, err error) {
	sum := func(q *model.Query) (float64, error) {
		sels, err := selectorsOf(q.Expr)
		if err != nil {
			return 0, err
		}
		v := 0.0
		for _, in := range inputs {
			for _, s := range sels {
				n, k := s.count(in.Counter.series())
				v += n*in.N + k*in.K
			}
		}
		return v, nil
	}
	if slo.SLI.Total == nil {
		return 0, 0, fmt.Errorf("the SLI has no total query")
	}
	if total, err = sum(slo.SLI.Total); err != nil {
		return 0, 0, err
	}
	switch {
	case slo.SLI.Bad != nil:
		bad, err = sum(slo.SLI.Bad)
	case slo.SLI.Good != nil:
		var good float64
		good, err = sum(slo.SLI.Good)
		bad = total - good
	}
	return total, bad, err
}
