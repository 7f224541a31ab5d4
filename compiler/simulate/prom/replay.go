package prom

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"

	"github.com/inferslo/inferslo/compiler/artifact"
)

// Replay is the simulation's in-process Prometheus (storage, PromQL engine
// and rules manager) opened for history that comes from elsewhere: a
// backtest loads real samples into it and evaluates the rule groups at
// real times.
type Replay struct {
	h *Harness
}

// NewReplay parses rule files and loads the groups keep accepts (all when
// keep is nil) over empty storage, kept in a folder of its own in scratch
// ("" for the system's temporary folder). Close releases it.
func NewReplay(files artifact.Set, keep func(group string) bool, scratch string) (*Replay, error) {
	x, err := IndexRules(files)
	if err != nil {
		return nil, err
	}
	if keep != nil {
		x = x.Selected(keep)
	}
	h, err := NewIndexedHarness(x, false, scratch)
	if err != nil {
		return nil, err
	}
	return &Replay{h: h}, nil
}

// Groups are the loaded rule groups, in a stable order.
func (r *Replay) Groups() []*rules.Group { return r.h.Groups }

// Restrict keeps, in every group, the rules target accepts and the
// recording rules they read, directly or not; the rest never evaluate.
func (r *Replay) Restrict(target func(rules.Rule) bool) { r.h.restrictRules(target) }

// Rewrite replaces every rule's expression by what f returns for it, given
// the group's interval; f gets a copy it may change. Labels, annotations and
// holds stay, so a rule whose parts are read from elsewhere (a backtest has
// the history's server evaluate them) alerts and records as before.
func (r *Replay) Rewrite(f func(interval time.Duration, expr parser.Expr) (parser.Expr, error)) error {
	p := query.NewParser()
	for i, g := range r.h.Groups {
		var rs []rules.Rule
		for _, rule := range g.Rules() {
			// A parse of the printed expression is a deep copy.
			e, err := p.ParseExpr(rule.Query().String())
			if err == nil {
				e, err = f(g.Interval(), e)
			}
			if err != nil {
				return fmt.Errorf("rule %s in group %s: %w", rule.Name(), g.Name(), err)
			}
			switch rule := rule.(type) {
			case *rules.RecordingRule:
				rs = append(rs, rules.NewRecordingRule(rule.Name(), e, rule.Labels()))
			case *rules.AlertingRule:
				rs = append(rs, rules.NewAlertingRule(rule.Name(), e, rule.HoldDuration(), rule.KeepFiringFor(),
					rule.Labels(), rule.Annotations(), labels.EmptyLabels(), "", true, r.h.opts.Logger))
			default:
				return fmt.Errorf("rule %s in group %s: a %T is neither recording nor alerting", rule.Name(), g.Name(), rule)
			}
		}
		r.h.Groups[i] = rules.NewGroup(rules.GroupOptions{Name: g.Name(), File: g.File(), Interval: g.Interval(), Rules: rs, Opts: r.h.opts})
	}
	return nil
}

// Appender appends samples to the replay's storage.
func (r *Replay) Appender(ctx context.Context) storage.Appender { return r.h.DB.Appender(ctx) }

// Eval evaluates the i-th group once at ts and returns the first rule
// error. Distinct groups may be evaluated concurrently, each in time order.
func (r *Replay) Eval(i int, ts time.Time) error { return evalGroup(r.h.Groups[i], ts) }

// Record evaluates every group's recording rules at the group's interval
// from from (rounded up to the interval) to to, each as one range query
// over the whole span, and stores their samples; the groups keep their
// alerting rules only, for Eval. A range query evaluates each step as the
// instant query of an evaluation at that time would, and a group orders
// its rules after those they read, so each rule reads what the rules
// engine would have recorded; a series that leaves a rule's result gets a
// staleness marker, as the rules engine writes. It costs a fraction of
// evaluating every step's instant queries: the engine slides a range
// query's windows instead of reading each anew.
func (r *Replay) Record(from, to time.Time) error {
	h := r.h
	for i, g := range h.Groups {
		iv := g.Interval()
		start := from.Truncate(iv)
		if start.Before(from) {
			start = start.Add(iv)
		}
		var alerts []rules.Rule
		for _, rule := range g.Rules() {
			rr, ok := rule.(*rules.RecordingRule)
			if !ok {
				alerts = append(alerts, rule)
				continue
			}
			if err := r.record(rr, start, to, iv); err != nil {
				return fmt.Errorf("rule %s in group %s: %w", rr.Name(), g.Name(), err)
			}
		}
		h.Groups[i] = rules.NewGroup(rules.GroupOptions{Name: g.Name(), File: g.File(), Interval: iv, Rules: alerts, Opts: h.opts})
	}
	return nil
}

// recordChunk bounds the steps of one range query: the engine holds
// each subexpression's result for every step at once (a month of a rate
// over 1,600 series took a GB).
const recordChunk = 360

func (r *Replay) record(rr *rules.RecordingRule, from, to time.Time, step time.Duration) error {
	return r.h.AppendRange(r.h, rr.Query().String(), from, to, step, func(b *labels.Builder) {
		rr.Labels().Range(func(l labels.Label) { b.Set(l.Name, l.Value) })
		b.Set(query.MetricNameLabel, rr.Name())
	})
}

// AppendRange evaluates qs in src at every step from from to to (range
// queries of at most recordChunk steps) and appends the answer's series,
// relabelled, to h, with a staleness marker one step after a series
// leaves the answer, as the rules manager marks a recording's: what a
// recording rule would have written at each evaluation, or a copy of
// another harness's series.
func (h *Harness) AppendRange(src *Harness, qs string, from, to time.Time, step time.Duration, relabel func(*labels.Builder)) error {
	ctx := context.Background()
	ms := step.Milliseconds()
	last := map[uint64]int64{}
	lsets := map[uint64]labels.Labels{}
	for start := from; !start.After(to); start = start.Add(recordChunk * step) {
		end := start.Add((recordChunk - 1) * step)
		if end.After(to) {
			end = to
		}
		q, err := src.Engine.NewRangeQuery(ctx, src.DB, nil, qs, start, end, step)
		if err != nil {
			return err
		}
		if err := h.appendAnswer(q, last, lsets, ms, relabel); err != nil {
			return err
		}
	}
	// A series that ended before the last step is stale after it.
	app := h.DB.Appender(ctx)
	for k, l := range last {
		if l < to.UnixMilli() {
			if _, err := app.Append(0, lsets[k], l+ms, math.Float64frombits(value.StaleNaN)); err != nil {
				app.Rollback()
				return err
			}
		}
	}
	return app.Commit()
}

// appendAnswer runs q and appends its series to h, marking each gap since
// a series' last sample stale.
func (h *Harness) appendAnswer(q promql.Query, last map[uint64]int64, lsets map[uint64]labels.Labels, ms int64, relabel func(*labels.Builder)) error {
	defer q.Close()
	ctx := context.Background()
	res := q.Exec(ctx)
	if res.Err != nil {
		return res.Err
	}
	m, err := res.Matrix()
	if err != nil {
		return err
	}
	app := h.DB.Appender(ctx)
	for _, sm := range m {
		if len(sm.Histograms) > 0 {
			app.Rollback()
			return fmt.Errorf("native histogram results are not recorded by a replay")
		}
		b := labels.NewBuilder(sm.Metric)
		relabel(b)
		lset := b.Labels()
		k := lset.Hash()
		lsets[k] = lset
		for _, p := range sm.Floats {
			if l, ok := last[k]; ok && p.T > l+ms {
				if _, err := app.Append(0, lset, l+ms, math.Float64frombits(value.StaleNaN)); err != nil {
					app.Rollback()
					return err
				}
			}
			if _, err := app.Append(0, lset, p.T, p.F); err != nil {
				app.Rollback()
				return err
			}
			last[k] = p.T
		}
	}
	return app.Commit()
}

// Matrix runs an instant query whose result is a range vector (raw
// samples) at ts.
func (r *Replay) Matrix(qs string, ts time.Time) (promql.Matrix, error) {
	res, err := runQuery(r.h.Engine.NewInstantQuery(context.Background(), r.h.DB, nil, qs, ts))
	if err != nil {
		return nil, err
	}
	return res.Matrix()
}

// Query evaluates qs over [start, end] at step (an instant query at end
// when step is 0), as the API of a server holding the replay's samples
// would, and hands the answer to use, which must not keep it: the engine
// reuses its memory once the query is closed.
func (r *Replay) Query(qs string, start, end time.Time, step time.Duration, use func(parser.Value) error) error {
	ctx := context.Background()
	var q promql.Query
	var err error
	if step == 0 {
		q, err = r.h.Engine.NewInstantQuery(ctx, r.h.DB, nil, qs, end)
	} else {
		q, err = r.h.Engine.NewRangeQuery(ctx, r.h.DB, nil, qs, start, end, step)
	}
	if err != nil {
		return err
	}
	defer q.Close()
	res := q.Exec(ctx)
	if res.Err != nil {
		return res.Err
	}
	return use(res.Value)
}

// Series lists the label sets of the series selector matches with samples
// in [from, to].
func (r *Replay) Series(selector string, from, to time.Time) ([]labels.Labels, error) {
	ms, err := query.NewParser().ParseMetricSelector(selector)
	if err != nil {
		return nil, err
	}
	q, err := r.h.DB.Querier(from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer q.Close()
	ss := q.Select(context.Background(), true, nil, ms...)
	var out []labels.Labels
	for ss.Next() {
		out = append(out, ss.At().Labels())
	}
	return out, ss.Err()
}

// Close releases the storage.
func (r *Replay) Close() { r.h.Close() }
