package timeline

import (
	"fmt"
	"time"

	"github.com/prometheus/prometheus/model/labels"
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

// recordRange appends what rr records at each step from from up to but not
// including to.
func recordRange(h *prom.Harness, rr *rules.RecordingRule, from, to, step time.Duration) error {
	return appendRange(h, h, rr.Query().String(), from, to, step, func(b *labels.Builder) {
		rr.Labels().Range(func(l labels.Label) { b.Set(l.Name, l.Value) })
		b.Set(query.MetricNameLabel, rr.Name())
	})
}

// copyRange appends to dst what selector reads in src at each step.
func copyRange(src, dst *prom.Harness, selector string, from, to, step time.Duration) error {
	return appendRange(src, dst, selector, from, to, step, func(*labels.Builder) {})
}

// appendRange is prom's AppendRange over simulated time, up to but not
// including to.
func appendRange(src, dst *prom.Harness, qs string, from, to, step time.Duration, relabel func(*labels.Builder)) error {
	if to <= from {
		return nil
	}
	lastStep := from + (to-1-from)/step*step
	return dst.AppendRange(src, qs, prom.Epoch().Add(from), prom.Epoch().Add(lastStep), step, relabel)
}
