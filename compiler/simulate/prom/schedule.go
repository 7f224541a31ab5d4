package prom

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
)

// lookback is the PromQL engine's default: an instant selector reads the
// latest sample up to this long before the evaluation time.
const lookback = 5 * time.Minute

// Schedule is, for a run whose result is read only at its last step (the
// day/night scenario), the evaluation steps at which each recording rule's
// output can reach that result: the targets at the last step, and every
// rule at the steps what needs it reads, through range selectors,
// subqueries and lookback. Evaluating each rule only there records, at the
// steps read, exactly what evaluating every rule at every step does: a
// rule's output at a step depends on its inputs alone, and each read window
// is evaluated in full (one step wider than the lookback, so a stale marker
// is written where a full run's would be read). A 28d window read once at
// the end then costs one evaluation, not one per minute.
type Schedule struct {
	eval  time.Duration
	steps int
	need  map[rules.Rule][]bool
	// last holds each rule's series at its previous evaluation, for stale
	// markers.
	last map[rules.Rule]map[string]labels.Labels
}

// NewSchedule plans groups of recording rules evaluated every eval from 0
// to end, read at the last step through the rules target selects. It
// declines (ok false) rules it cannot follow: alerts, @ modifiers, negative
// or computed offsets and ranges, subqueries without a step, query offsets.
func NewSchedule(groups []*rules.Group, eval, end time.Duration, target func(*rules.RecordingRule) bool) (*Schedule, bool) {
	sc := &Schedule{eval: eval, steps: int(end/eval) + 1, need: map[rules.Rule][]bool{}, last: map[rules.Rule]map[string]labels.Labels{}}
	var all []*rules.RecordingRule
	for _, g := range groups {
		if g.QueryOffset() != 0 || g.Limit() != 0 {
			return nil, false
		}
		for _, r := range g.Rules() {
			rr, ok := r.(*rules.RecordingRule)
			if !ok {
				return nil, false
			}
			all = append(all, rr)
			sc.need[rr] = make([]bool, sc.steps)
		}
	}
	lastT := time.Duration(sc.steps-1) * eval
	for _, r := range all {
		if target(r) {
			sc.mark(r, lastT-lookback-eval, lastT)
		}
	}
	// Propagate from readers to what they read until nothing changes;
	// done holds the steps of each rule already propagated.
	done := map[rules.Rule][]bool{}
	for _, r := range all {
		done[r] = make([]bool, sc.steps)
	}
	for changed := true; changed; {
		changed = false
		for i := len(all) - 1; i >= 0; i-- {
			q := all[i]
			for step, needed := range sc.need[q] {
				if !needed || done[q][step] {
					continue
				}
				done[q][step] = true
				windows, ok := readWindows(q.Query(), time.Duration(step)*eval, eval)
				if !ok {
					return nil, false
				}
				for _, w := range windows {
					for _, r := range all {
						if selects(w.sel, r) && sc.mark(r, w.from, w.to) {
							changed = true
						}
					}
				}
			}
		}
	}
	return sc, true
}

// mark needs r at every step in [from, to]; it tells whether that added one.
func (sc *Schedule) mark(r rules.Rule, from, to time.Duration) bool {
	lo := max(0, int(math.Ceil(float64(from)/float64(sc.eval))))
	hi := min(sc.steps-1, int(math.Floor(float64(to)/float64(sc.eval))))
	added := false
	for i := lo; i <= hi; i++ {
		if !sc.need[r][i] {
			sc.need[r][i] = true
			added = true
		}
	}
	return added
}

// window is a span of simulated time a selector reads.
type window struct {
	sel      *parser.VectorSelector
	from, to time.Duration
}

// readWindows lists what each selector of expr reads when expr is
// evaluated at t (simulated time), with the evaluation interval eval.
func readWindows(expr parser.Expr, t, eval time.Duration) (out []window, ok bool) {
	ok = true
	base := Epoch().UnixMilli()
	parser.Inspect(expr, func(n parser.Node, path []parser.Node) error {
		vs, isSel := n.(*parser.VectorSelector)
		if !isSel || !ok {
			return nil
		}
		if vs.Timestamp != nil || vs.StartOrEnd != 0 || vs.OriginalOffset < 0 || vs.OriginalOffsetExpr != nil {
			ok = false
			return nil
		}
		times := []int64{base + t.Milliseconds()}
		var rng time.Duration
		instant := true
		for _, anc := range path {
			switch a := anc.(type) {
			case *parser.SubqueryExpr:
				if a.Timestamp != nil || a.StartOrEnd != 0 || a.OriginalOffset < 0 || a.OriginalOffsetExpr != nil ||
					a.RangeExpr != nil || a.StepExpr != nil || a.Step <= 0 {
					ok = false
					return nil
				}
				step := a.Step.Milliseconds()
				var inner []int64
				for _, tau := range times {
					hi := tau - a.OriginalOffset.Milliseconds()
					lo := hi - a.Range.Milliseconds()
					for x := step * (lo / step); x <= hi; x += step {
						if x >= lo {
							inner = append(inner, x)
						}
					}
				}
				times = inner
			case *parser.MatrixSelector:
				if a.RangeExpr != nil {
					ok = false
					return nil
				}
				rng, instant = a.Range, false
			}
		}
		span := rng
		if instant {
			span = lookback + eval
		}
		off := vs.OriginalOffset
		for _, tau := range times {
			to := time.Duration(tau-base)*time.Millisecond - off
			out = append(out, window{sel: vs, from: to - span, to: to})
		}
		return nil
	})
	return out, ok
}

// run evaluates, at step, the rules needed there, in group order, and
// appends their samples as the group would, stale markers included.
func (sc *Schedule) run(h *Harness, step int) error {
	ts := Epoch().Add(time.Duration(step) * sc.eval)
	for _, g := range h.Groups {
		for _, r := range g.Rules() {
			if !sc.need[r][step] {
				continue
			}
			seen, err := h.evalRule(r, ts, sc.last[r], h.opts.QueryFunc)
			if err != nil {
				return fmt.Errorf("rule %s in group %s: %w", r.Name(), g.Name(), err)
			}
			sc.last[r] = seen
		}
	}
	return nil
}

// evalRule evaluates r at ts, its queries answered by query, and appends
// its samples as its group would, with a stale marker for each series of
// last, its answer the evaluation before, that it no longer answers; it
// returns the series it answered.
func (h *Harness) evalRule(r rules.Rule, ts time.Time, last map[string]labels.Labels, query rules.QueryFunc) (map[string]labels.Labels, error) {
	ctx := context.Background()
	vec, err := r.Eval(ctx, 0, ts, query, nil, 0)
	if err != nil {
		return nil, err
	}
	app := h.DB.Appender(ctx)
	seen := make(map[string]labels.Labels, len(vec))
	for _, s := range vec {
		if s.H != nil {
			_, err = app.AppendHistogram(0, s.Metric, s.T, nil, s.H)
		} else {
			_, err = app.Append(0, s.Metric, s.T, s.F)
		}
		if err != nil {
			app.Rollback()
			return nil, fmt.Errorf("append: %w", err)
		}
		seen[s.Metric.String()] = s.Metric
	}
	for key, l := range last {
		if _, ok := seen[key]; !ok {
			if _, err := app.Append(0, l, ts.UnixMilli(), math.Float64frombits(value.StaleNaN)); err != nil {
				app.Rollback()
				return nil, fmt.Errorf("stale marker: %w", err)
			}
		}
	}
	if err := app.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return seen, nil
}
