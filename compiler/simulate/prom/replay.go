package prom

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

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
	_, err := r.h.appendRange(r.h, recordingOf(rr), rr.Query().String(), from, to, step)
	return err
}

// AppendRange evaluates qs in src at every step from from to to (range
// queries of at most recordChunk steps) and appends the answer's series,
// relabelled, to h, with a staleness marker one step after a series
// leaves the answer, as the rules manager marks a recording's: what a
// recording rule would have written at each evaluation, or a copy of
// another harness's series.
func (h *Harness) AppendRange(src *Harness, qs string, from, to time.Time, step time.Duration, relabel func(*labels.Builder)) error {
	_, err := h.appendRange(src, newRecording(relabel), qs, from, to, step)
	return err
}

// appendRange is AppendRange carrying on rec, the series recorded before
// from. When a query fails, it returns the first step that query asked
// for: rec has recorded the steps before it.
func (h *Harness) appendRange(src *Harness, rec *recording, qs string, from, to time.Time, step time.Duration) (time.Time, error) {
	ctx := context.Background()
	for start := from; !start.After(to); start = start.Add(recordChunk * step) {
		end := start.Add((recordChunk - 1) * step)
		if end.After(to) {
			end = to
		}
		q, err := src.Engine.NewRangeQuery(ctx, src.Queryable(), nil, qs, start, end, step)
		if err == nil {
			err = h.appendAnswer(q, rec, end.UnixMilli(), step.Milliseconds())
		}
		if err != nil {
			return start, err
		}
	}
	return to, nil
}

// appendAnswer runs q and appends its series to h (see recording.add).
func (h *Harness) appendAnswer(q promql.Query, rec *recording, to, ms int64) error {
	defer q.Close()
	res := q.Exec(context.Background())
	if res.Err != nil {
		return res.Err
	}
	m, err := res.Matrix()
	if err != nil {
		return err
	}
	return rec.add(h, m, to, ms)
}

// recording is what appending a rule's answers span after span needs to
// know from the spans before: each series' labels and, while the series
// is in the answer, its latest step.
type recording struct {
	relabel func(*labels.Builder)
	live    map[uint64]int64
	lsets   map[uint64]labels.Labels
	// refs are the series' references in the storage appended to.
	refs map[uint64]storage.SeriesRef
}

func newRecording(relabel func(*labels.Builder)) *recording {
	return &recording{relabel: relabel, live: map[uint64]int64{}, lsets: map[uint64]labels.Labels{}, refs: map[uint64]storage.SeriesRef{}}
}

// recordingOf records what rr records: its name and labels over the
// answer's.
func recordingOf(rr *rules.RecordingRule) *recording {
	return newRecording(func(b *labels.Builder) {
		rr.Labels().Range(func(l labels.Label) { b.Set(l.Name, l.Value) })
		b.Set(query.MetricNameLabel, rr.Name())
	})
}

// cloneAt is an independent copy of rec, for another storage, as rec
// stood after its step at maxt (math.MaxInt64: its last), reading the
// series it recorded in q: those answered at maxt are live.
func (rec *recording) cloneAt(q storage.Queryable, maxt int64) (*recording, error) {
	c := &recording{relabel: rec.relabel, live: maps.Clone(rec.live), lsets: maps.Clone(rec.lsets), refs: map[uint64]storage.SeriesRef{}}
	if maxt == math.MaxInt64 {
		return c, nil
	}
	clear(c.live)
	at, err := q.Querier(maxt, maxt)
	if err != nil {
		return nil, err
	}
	defer at.Close()
	var it chunkenc.Iterator
	for k, lset := range rec.lsets {
		var ms []*labels.Matcher
		lset.Range(func(l labels.Label) { ms = append(ms, labels.MustNewMatcher(labels.MatchEqual, l.Name, l.Value)) })
		set := at.Select(context.Background(), false, nil, ms...)
		for set.Next() {
			if !labels.Equal(set.At().Labels(), lset) {
				continue
			}
			it = set.At().Iterator(it)
			live := false
			switch it.Seek(maxt) {
			case chunkenc.ValFloat:
				t, v := it.At()
				live = t == maxt && !value.IsStaleNaN(v)
			case chunkenc.ValHistogram, chunkenc.ValFloatHistogram:
				t, fh := it.AtFloatHistogram(nil)
				live = t == maxt && !value.IsStaleNaN(fh.Sum)
			}
			if live {
				c.live[k] = maxt
			}
		}
		if err := set.Err(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// errSameLabelset is the rules manager's error for a recording whose
// answer holds one series twice once relabelled.
var errSameLabelset = errors.New("vector contains metrics with the same labelset after applying rule labels")

// point is one step of a recorded series.
type point struct {
	t int64
	f float64
	h *histogram.FloatHistogram
}

// add appends m, an answer over steps ms apart up to to, relabelled, to
// h: a staleness marker goes one step after each step a series was
// answered and the next was not, as the rules manager marks a
// recording's. Two series that relabel alike at one step are the rules
// manager's error at that step (a *StepError); nothing is appended then.
func (rec *recording) add(h *Harness, m promql.Matrix, to, ms int64) error {
	points := make(map[uint64][]point, len(m))
	var keys []uint64
	for _, sm := range m {
		b := labels.NewBuilder(sm.Metric)
		rec.relabel(b)
		lset := b.Labels()
		k := lset.Hash()
		if _, ok := points[k]; !ok {
			keys = append(keys, k)
		}
		rec.lsets[k] = lset
		ps := points[k]
		for _, p := range sm.Floats {
			ps = append(ps, point{t: p.T, f: p.F})
		}
		for _, p := range sm.Histograms {
			ps = append(ps, point{t: p.T, h: p.H})
		}
		points[k] = ps
	}
	dup := int64(math.MaxInt64)
	for _, k := range keys {
		ps := points[k]
		slices.SortFunc(ps, func(a, b point) int { return cmp.Compare(a.t, b.t) })
		for i := 1; i < len(ps); i++ {
			if ps[i].t == ps[i-1].t {
				dup = min(dup, ps[i].t)
			}
		}
	}
	if dup != math.MaxInt64 {
		return &StepError{At: time.UnixMilli(dup).UTC(), Err: errSameLabelset}
	}
	app := h.DB.Appender(context.Background())
	stale := func(k uint64, t int64) error {
		_, err := app.Append(rec.refs[k], rec.lsets[k], t, math.Float64frombits(value.StaleNaN))
		return err
	}
	for _, k := range keys {
		lset := rec.lsets[k]
		for _, p := range points[k] {
			if l, ok := rec.live[k]; ok && p.t > l+ms {
				if err := stale(k, l+ms); err != nil {
					app.Rollback()
					return err
				}
			}
			var ref storage.SeriesRef
			var err error
			if p.h != nil {
				ref, err = app.AppendHistogram(rec.refs[k], lset, p.t, nil, p.h)
			} else {
				ref, err = app.Append(rec.refs[k], lset, p.t, p.f)
			}
			if err != nil {
				app.Rollback()
				return err
			}
			rec.refs[k] = ref
			rec.live[k] = p.t
		}
	}
	// A series that left the answer before its last step is stale a step
	// after it left.
	for k, l := range rec.live {
		if l < to {
			if err := stale(k, l+ms); err != nil {
				app.Rollback()
				return err
			}
			delete(rec.live, k)
		}
	}
	return app.Commit()
}

// StepError is a query that failed at one step of those it was asked
// for.
type StepError struct {
	At  time.Time
	Err error
}

func (e *StepError) Error() string { return e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

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
