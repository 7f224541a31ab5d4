package timeline

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// recordHistory records the healthy history before the fine part of the
// replay with one range query per recording rule, rather than an instant
// evaluation of every group per step (the same values: a range query
// evaluates the expression at each step as the rules manager would, and
// the rules run in group order, so each reads what the ones before it
// recorded). The base-window recordings and the sums are recorded at every
// evaluation, the longer windows at the query steps, as the step-by-step
// replay evaluated them; alerting rules start at the fine part, as the
// history is healthy. The feeds of another SLO's recordings are copied
// over the same span first.
func (r *serviceReplay) recordHistory(to time.Duration, order []*replaySim) error {
	for _, s := range order {
		for _, f := range s.feedsFull {
			if err := copyRange(f.from.h, s.h, f.selector, 0, to, s.eval); err != nil {
				return fmt.Errorf("slo %s: copy %s: %w", s.slo.Name, f.selector, err)
			}
		}
		base := map[string]bool{}
		for _, g := range s.base {
			for _, rule := range g.Rules() {
				base[rule.String()] = true
			}
		}
		for _, g := range s.full {
			for _, rule := range g.Rules() {
				rr, ok := rule.(*rules.RecordingRule)
				if !ok {
					continue
				}
				step := r.opts.Step
				if base[rule.String()] {
					step = s.eval
				}
				if err := recordRange(s.h, rr, 0, to, step); err != nil {
					return fmt.Errorf("slo %s: rule %s: %w", s.slo.Name, rr.Name(), err)
				}
			}
		}
	}
	return nil
}

// rangeChunk bounds the steps of one range query, so a long history is
// not held in memory at once.
const rangeChunk = 720

// recordRange appends what rr records at each step from from up to but not
// including to, marking a series stale after its last step as the rules
// manager does.
func recordRange(h *prom.Harness, rr *rules.RecordingRule, from, to, step time.Duration) error {
	qs := rr.Query().String()
	return appendRange(h, h, qs, from, to, step, func(b *labels.Builder) {
		rr.Labels().Range(func(l labels.Label) { b.Set(l.Name, l.Value) })
		b.Set(query.MetricNameLabel, rr.Name())
	})
}

// copyRange appends to dst what selector reads in src at each step.
func copyRange(src, dst *prom.Harness, selector string, from, to, step time.Duration) error {
	return appendRange(src, dst, selector, from, to, step, func(*labels.Builder) {})
}

func appendRange(src, dst *prom.Harness, qs string, from, to, step time.Duration, relabel func(*labels.Builder)) error {
	ctx := context.Background()
	last := map[uint64]int64{}
	lsets := map[uint64]labels.Labels{}
	ms := step.Milliseconds()
	// The last step before to; steps are multiples of step from from.
	lastStep := from + (to-1-from)/step*step
	for start := from; start <= lastStep; start += rangeChunk * step {
		end := min(start+(rangeChunk-1)*step, lastStep)
		if end < start {
			break
		}
		q, err := src.Engine.NewRangeQuery(ctx, src.DB, nil, qs, prom.Epoch().Add(start), prom.Epoch().Add(end), step)
		if err != nil {
			return err
		}
		res := q.Exec(ctx)
		if res.Err != nil {
			q.Close()
			return res.Err
		}
		m, err := res.Matrix()
		if err != nil {
			q.Close()
			return err
		}
		app := dst.DB.Appender(ctx)
		for _, sm := range m {
			b := labels.NewBuilder(sm.Metric)
			relabel(b)
			lset := b.Labels()
			k := lset.Hash()
			lsets[k] = lset
			for _, p := range sm.Floats {
				if l, ok := last[k]; ok && p.T > l+ms {
					if _, err := app.Append(0, lset, l+ms, math.Float64frombits(value.StaleNaN)); err != nil {
						app.Rollback()
						q.Close()
						return err
					}
				}
				if _, err := app.Append(0, lset, p.T, p.F); err != nil {
					app.Rollback()
					q.Close()
					return err
				}
				last[k] = p.T
			}
		}
		q.Close()
		if err := app.Commit(); err != nil {
			return err
		}
	}
	// A series that ended before the last step is stale after it, as the
	// rules manager marks it.
	endMs := prom.Epoch().Add(lastStep).UnixMilli()
	app := dst.DB.Appender(ctx)
	for k, l := range last {
		if l < endMs {
			if _, err := app.Append(0, lsets[k], l+ms, math.Float64frombits(value.StaleNaN)); err != nil {
				app.Rollback()
				return err
			}
		}
	}
	return app.Commit()
}
