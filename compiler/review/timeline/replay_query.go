package timeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// query evaluates every query over the replay in the harnesses it may read
// from: coarse steps for the healthy history, fine ones from an hour before
// the burn.
func (r *serviceReplay) query(queries []string, parsed []parser.Expr) error {
	type span struct {
		from, to, step time.Duration
	}
	var spans []span
	fine := r.opts.Healthy - time.Hour
	if r.opts.SkipBurn || fine <= 0 {
		spans = []span{{0, r.end, r.opts.Step}}
	} else {
		coarseEnd := fine - fine%r.opts.Step
		spans = []span{{0, coarseEnd, r.opts.Step}, {coarseEnd + r.opts.BurnStep, r.end, r.opts.BurnStep}}
	}
	r.series = map[string][]TimeSeries{}
	for i, q := range queries {
		var got []TimeSeries
		for _, s := range r.order(q, parsed[i]) {
			var one []TimeSeries
			for _, sp := range spans {
				if sp.to < sp.from {
					continue
				}
				var err error
				if one, err = rangeQuery(s.h, one, q, sp.from, sp.to, sp.step); err != nil {
					return fmt.Errorf("query %q: %w", q, err)
				}
			}
			got = mergeSeries(got, one)
		}
		if len(got) > 0 {
			r.series[q] = got
		}
	}
	return nil
}

// order lists the harnesses a query may read from, preferred first: those
// whose SLI histogram the query names, then the rest in spec order. A
// harness is left out when every selector's slo or service matcher
// rejects its SLO.
func (r *serviceReplay) order(q string, expr parser.Expr) []*replaySim {
	var first, rest []*replaySim
	for _, s := range r.sims {
		if !mayRead(expr, s.names, s.slo.Service.Name) {
			continue
		}
		// A native histogram is named bare; a classic one by its series.
		if inf := s.slo.Inference; inf != nil && inf.Histogram != "" && (strings.Contains(q, inf.Histogram+"_") || inf.Native && strings.Contains(q, inf.Histogram)) {
			first = append(first, s)
		} else {
			rest = append(rest, s)
		}
	}
	return append(first, rest...)
}

func mayRead(expr parser.Expr, names []string, service string) bool {
	return slices.ContainsFunc(query.Selectors(expr), func(vs *parser.VectorSelector) bool {
		return !slices.ContainsFunc(vs.LabelMatchers, func(m *labels.Matcher) bool {
			return m.Name == model.LabelSLO && !slices.ContainsFunc(names, m.Matches) || m.Name == model.LabelService && !m.Matches(service)
		})
	})
}

// rangeQuery runs a range query over simulated time and adds its result
// to out. The result is copied before the query closes: closing hands the
// matrix's points back to a pool that other queries, in other goroutines,
// fill again.
func rangeQuery(h *prom.Harness, out []TimeSeries, qs string, from, to, step time.Duration) ([]TimeSeries, error) {
	q, err := h.Engine.NewRangeQuery(context.Background(), h.DB, nil, qs, prom.Epoch().Add(from), prom.Epoch().Add(to), step)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	res := q.Exec(context.Background())
	if res.Err != nil {
		return nil, res.Err
	}
	m, err := res.Matrix()
	if err != nil {
		return nil, err
	}
	return appendMatrix(out, m), nil
}

// appendMatrix adds a range result to series, joining the points of equal
// label sets.
func appendMatrix(out []TimeSeries, m promql.Matrix) []TimeSeries {
	for _, s := range m {
		ls := s.Metric.Map()
		idx := slices.IndexFunc(out, func(o TimeSeries) bool { return maps.Equal(o.Labels, ls) })
		if idx < 0 {
			out = append(out, TimeSeries{Labels: ls})
			idx = len(out) - 1
		}
		for _, p := range s.Floats {
			out[idx].Points = append(out[idx].Points, Sample{T: time.UnixMilli(p.T).UTC(), V: p.F})
		}
	}
	return out
}

// mergeSeries adds the series of add whose label sets dst lacks.
func mergeSeries(dst, add []TimeSeries) []TimeSeries {
	for _, s := range add {
		if !slices.ContainsFunc(dst, func(d TimeSeries) bool { return maps.Equal(d.Labels, s.Labels) }) {
			dst = append(dst, s)
		}
	}
	return dst
}
