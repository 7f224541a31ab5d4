package prom

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/query"
)

// EvalError is a rule that failed to evaluate at step At (simulated
// time).
type EvalError struct {
	At  time.Duration
	Err error
}

func (e *EvalError) Error() string { return e.Err.Error() }
func (e *EvalError) Unwrap() error { return e.Err }

// spanState is what evaluating span after span carries from one to the
// next: each recording rule's recorded series and each alerting rule's
// answer at the last step, for staleness markers.
type spanState struct {
	recorded map[*rules.RecordingRule]*recording
	alerted  map[*rules.AlertingRule]map[string]labels.Labels
	// spannable is whether the groups of, a copy of Groups when Spans
	// last looked, allow spans.
	of        []*rules.Group
	spannable bool
}

// EvalSpan evaluates the groups at every step from from to to, the groups'
// interval apart, as Eval at each step does: advance(t) puts every scrape
// up to t in storage, and each, called after every step, stops the span
// when it returns true. It returns the last step evaluated; a rule that
// fails is an *EvalError.
//
// When no rule reads what a rule after it records (so every rule reads
// only what the evaluation it is part of, or an earlier one, wrote), and
// none reads ahead of its evaluation time (no negative offset, no @), each
// recording rule is evaluated as one range query over the span, in group
// order, after every scrape of the span is stored; the alerting rules then
// run step by step, reading those recordings. The engine answers each step
// of a range query as the instant query at that time, and a query at t
// reads nothing later than t, so the alerts see what evaluating the groups
// step by step writes, for a fraction of the queries: the engine reads each
// series once per span, not once per step and window. A harness may go
// from steps (Eval) to spans and back: a span after Eval starts from the
// alert series the rules wrote (a recorded series that vanishes at its
// first step gets no stale marker, nor one vanishing at the first Eval
// after a span).
func (h *Harness) EvalSpan(from, to time.Duration, advance func(time.Duration) error, each func(time.Duration) bool) (time.Duration, error) {
	if len(h.Groups) == 0 {
		return from, nil
	}
	eval := h.Groups[0].Interval()
	last := from - eval
	if to < from {
		return last, nil
	}
	// The last step: a span recording up to to would mark a series
	// answered at that step stale after it.
	to -= (to - from) % eval
	if !h.Spans() {
		for t := from; t <= to; t += eval {
			if err := advance(t); err != nil {
				return last, err
			}
			if err := h.Eval(t); err != nil {
				return last, &EvalError{At: t, Err: err}
			}
			last = t
			if each(t) {
				break
			}
		}
		return last, nil
	}
	if err := advance(to); err != nil {
		return last, err
	}
	if h.span.recorded == nil {
		h.span.recorded, h.span.alerted = map[*rules.RecordingRule]*recording{}, map[*rules.AlertingRule]map[string]labels.Labels{}
		for _, g := range h.Groups {
			for _, r := range g.Rules() {
				if ar, ok := r.(*rules.AlertingRule); ok {
					if seen := alertSeries(ar); len(seen) > 0 {
						h.span.alerted[ar] = seen
					}
				}
			}
		}
	}
	// A rule failing at some step ends the span before it, for the rules
	// after it too: the step by step run stops there.
	var failed *EvalError
	end := to
	for _, g := range h.Groups {
		for _, r := range g.Rules() {
			rr, ok := r.(*rules.RecordingRule)
			if !ok || end < from {
				continue
			}
			at, err := h.recordSpan(rr, from, end, eval)
			if err != nil {
				failed = &EvalError{At: at, Err: fmt.Errorf("rule %s in group %s: %w", rr.Name(), g.Name(), err)}
				end = at - eval
			}
		}
	}
	answers, qsOf := h.answerSpan(from, end, eval)
	query := func(ctx context.Context, qs string, ts time.Time) (promql.Vector, error) {
		if steps, ok := answers[qs]; ok {
			return steps[ts.Sub(Epoch().Add(from))/eval], nil
		}
		return h.opts.QueryFunc(ctx, qs, ts)
	}
	for t := from; t <= end; t += eval {
		ts := Epoch().Add(t)
		for _, g := range h.Groups {
			for _, r := range g.Rules() {
				ar, ok := r.(*rules.AlertingRule)
				if !ok || quiet(ar, answers[qsOf[ar]], (t-from)/eval, h.span.alerted[ar]) {
					continue
				}
				seen, err := h.evalRule(ar, ts, h.span.alerted[ar], query)
				if err != nil {
					return last, &EvalError{At: t, Err: fmt.Errorf("rule %s in group %s: %w", ar.Name(), g.Name(), err)}
				}
				h.span.alerted[ar] = seen
			}
		}
		last = t
		if each(t) {
			return last, nil
		}
	}
	if failed != nil {
		return last, failed
	}
	return last, nil
}

// alertSeries are the series ar wrote at its last evaluation, as
// rules.AlertingRule.Eval writes them: ALERTS and ALERTS_FOR_STATE for
// each pending or firing alert of a restored rule. The first span after
// evaluations step by step (Eval) starts from them, so an alert that
// resolves in it gets the stale markers the rules manager would write.
func alertSeries(ar *rules.AlertingRule) map[string]labels.Labels {
	seen := map[string]labels.Labels{}
	if !ar.Restored() {
		return seen
	}
	ar.ForEachActiveAlert(func(a *rules.Alert) {
		if a.State == rules.StateInactive {
			return
		}
		for _, name := range []string{"ALERTS", "ALERTS_FOR_STATE"} {
			b := labels.NewBuilder(ar.Labels())
			a.Labels.Range(func(l labels.Label) { b.Set(l.Name, l.Value) })
			b.Set(labels.MetricName, name)
			b.Set(labels.AlertName, ar.Name())
			if name == "ALERTS" {
				b.Set("alertstate", a.State.String())
			}
			ls := b.Labels()
			seen[ls.String()] = ls
		}
	})
	return seen
}

// quiet tells whether evaluating ar at step i of a span, steps its
// query's answers, would change nothing: nothing answers, ar holds no
// alert, not even a resolved one, and wrote no series the evaluation
// before (last).
func quiet(ar *rules.AlertingRule, steps []promql.Vector, i time.Duration, last map[string]labels.Labels) bool {
	if steps == nil || len(steps[i]) > 0 || len(last) > 0 {
		return false
	}
	held := false
	ar.ForEachActiveAlert(func(*rules.Alert) { held = true })
	return !held
}

// answerSpan runs each alerting rule's query as range queries over the
// span and returns the answer of each step by query, a vector as the
// instant query at that step answers, and each rule's query; a query
// whose range query fails is left to the instant queries.
func (h *Harness) answerSpan(from, to, eval time.Duration) (map[string][]promql.Vector, map[*rules.AlertingRule]string) {
	out := map[string][]promql.Vector{}
	qsOf := map[*rules.AlertingRule]string{}
	ctx := context.Background()
	for _, g := range h.Groups {
		for _, r := range g.Rules() {
			ar, ok := r.(*rules.AlertingRule)
			if !ok {
				continue
			}
			qs := ar.Query().String()
			qsOf[ar] = qs
			if _, done := out[qs]; done {
				continue
			}
			steps := make([]promql.Vector, (to-from)/eval+1)
			ok = true
			for start := from; ok && start <= to; start += recordChunk * eval {
				end := min(start+(recordChunk-1)*eval, to)
				q, err := h.Engine.NewRangeQuery(ctx, h.Queryable(), nil, qs, Epoch().Add(start), Epoch().Add(end), eval)
				if err != nil {
					ok = false
					break
				}
				ok = stepAnswers(q, steps, Epoch().Add(from).UnixMilli(), eval.Milliseconds())
			}
			if ok {
				out[qs] = steps
			}
		}
	}
	return out, qsOf
}

// stepAnswers runs q and adds each of its series' points to the vector of
// its step, first at from, ms apart; it tells whether q ran.
func stepAnswers(q promql.Query, steps []promql.Vector, from, ms int64) bool {
	defer q.Close()
	res := q.Exec(context.Background())
	m, err := res.Matrix()
	if res.Err != nil || err != nil {
		return false
	}
	for _, sm := range m {
		for _, p := range sm.Floats {
			i := (p.T - from) / ms
			steps[i] = append(steps[i], promql.Sample{Metric: sm.Metric, T: p.T, F: p.F})
		}
		for _, p := range sm.Histograms {
			i := (p.T - from) / ms
			steps[i] = append(steps[i], promql.Sample{Metric: sm.Metric, T: p.T, H: p.H})
		}
	}
	return true
}

// recordSpan appends what rr records at every step from from to to. Where
// a range query fails, the steps are evaluated one by one, which records
// every step before the one the rule fails at; it returns that step with
// the error.
func (h *Harness) recordSpan(rr *rules.RecordingRule, from, to, eval time.Duration) (time.Duration, error) {
	rec := h.span.recorded[rr]
	if rec == nil {
		rec = recordingOf(rr)
		h.span.recorded[rr] = rec
	}
	qs := rr.Query().String()
	next, err := h.appendRange(h, rec, qs, Epoch().Add(from), Epoch().Add(to), eval)
	if err == nil {
		return 0, nil
	}
	for t := next.Sub(Epoch()); t <= to; t += eval {
		ts := Epoch().Add(t)
		vec, err := h.opts.QueryFunc(h.opts.Context, qs, ts)
		if err == nil {
			err = rec.add(h, vectorMatrix(vec, ts), ts.UnixMilli(), eval.Milliseconds())
		}
		if err != nil {
			return t, err
		}
	}
	// The range query failed where no step does (a limit on what one
	// query holds): the steps are recorded all the same.
	return 0, nil
}

// vectorMatrix is an instant query's answer as a range query's of one
// step.
func vectorMatrix(vec promql.Vector, ts time.Time) promql.Matrix {
	m := make(promql.Matrix, len(vec))
	for i, s := range vec {
		m[i].Metric = s.Metric
		if s.H != nil {
			m[i].Histograms = []promql.HPoint{{T: ts.UnixMilli(), H: s.H}}
		} else {
			m[i].Floats = []promql.FPoint{{T: ts.UnixMilli(), F: s.F}}
		}
	}
	return m
}

// Spans tells whether EvalSpan evaluates the groups span by span: see
// there. A schedule, query statistics or Stepwise keep it step by step.
func (h *Harness) Spans() bool {
	if h.Sched != nil || h.Counted != nil || h.Stepwise {
		return false
	}
	if h.span.of == nil || !slices.Equal(h.span.of, h.Groups) {
		h.span.of, h.span.spannable = slices.Clone(h.Groups), spannable(h.Groups)
	}
	return h.span.spannable
}

// spannable tells whether no rule of groups reads what a rule after it
// records, nor ahead of its evaluation time, and the groups evaluate
// alike.
func spannable(groups []*rules.Group) bool {
	var all []rules.Rule
	for _, g := range groups {
		if g.QueryOffset() != 0 || g.Limit() != 0 || g.Interval() != groups[0].Interval() {
			return false
		}
		all = append(all, g.Rules()...)
	}
	for i, r := range all {
		_, recording := r.(*rules.RecordingRule)
		if !readsBehind(r.Query(), recording) {
			return false
		}
		for _, later := range all[i:] {
			if rr, ok := later.(*rules.RecordingRule); ok && reads(r.Query(), rr) {
				return false
			}
		}
	}
	return true
}

// readsBehind tells whether expr reads nothing later than its evaluation
// time and, for a recording rule's, no alert series (the alerts of a step
// are written after its recordings).
func readsBehind(expr parser.Expr, recording bool) bool {
	ok := true
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			if n.Timestamp != nil || n.StartOrEnd != 0 || n.OriginalOffset < 0 || n.OriginalOffsetExpr != nil {
				ok = false
			}
			if recording && mayReadAlerts(n) {
				ok = false
			}
		case *parser.SubqueryExpr:
			if n.Timestamp != nil || n.StartOrEnd != 0 || n.OriginalOffset < 0 || n.OriginalOffsetExpr != nil {
				ok = false
			}
		}
		return nil
	})
	return ok
}

// mayReadAlerts tells whether vs may select the series alerting rules
// write.
func mayReadAlerts(vs *parser.VectorSelector) bool {
	// The rules manager's names for them.
	for _, name := range []string{"ALERTS", "ALERTS_FOR_STATE"} {
		matches := true
		for _, m := range vs.LabelMatchers {
			if m.Name == query.MetricNameLabel && !m.Matches(name) {
				matches = false
			}
		}
		if matches {
			return true
		}
	}
	return false
}

// copySpan carries the span state of h's rules over to n's, a copy
// evaluating the same groups from h's step at maxt on (math.MaxInt64:
// from h's last).
func (h *Harness) copySpan(n *Harness, maxt int64) error {
	if h.span.recorded == nil {
		return nil
	}
	n.span.recorded, n.span.alerted = map[*rules.RecordingRule]*recording{}, map[*rules.AlertingRule]map[string]labels.Labels{}
	for i, g := range h.Groups {
		ours, theirs := g.Rules(), n.Groups[i].Rules()
		if len(ours) != len(theirs) {
			return errors.New("copy of the rule groups holds other rules")
		}
		for j, r := range ours {
			switch r := r.(type) {
			case *rules.RecordingRule:
				c, ok := theirs[j].(*rules.RecordingRule)
				if !ok || c.Name() != r.Name() {
					return errors.New("copy of the rule groups holds other rules")
				}
				if rec := h.span.recorded[r]; rec != nil {
					cl, err := rec.cloneAt(h.Queryable(), maxt)
					if err != nil {
						return err
					}
					n.span.recorded[c] = cl
				}
			case *rules.AlertingRule:
				c, ok := theirs[j].(*rules.AlertingRule)
				if !ok || c.Name() != r.Name() {
					return errors.New("copy of the rule groups holds other rules")
				}
				n.span.alerted[c] = h.span.alerted[r]
			}
		}
	}
	return nil
}
