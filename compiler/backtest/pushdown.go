package backtest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/safetext"
)

// Read says where the parts of the rules that read raw series evaluate.
type Read string

const (
	// ReadServer has the history's server evaluate every part of a rule
	// that reads raw series only, at the rule's evaluation times, and
	// reads back its small answer (per-SLO rates and ratios, not every
	// bucket of every pod); raw series are read only for what cannot
	// run there. The default.
	ReadServer Read = "server"
	// ReadRaw reads every raw series the rules read, at the step, and
	// evaluates the rules here: for servers that store but cannot
	// evaluate, and to check the server's answers.
	ReadRaw Read = "raw"
)

// part is a subexpression of the rules that reads raw series only: the
// server evaluates it at the group's interval and the rules read its
// answer as a series of its own.
type part struct {
	// name is the series the rewritten rules read in its place.
	name string
	// expr is what the server evaluates.
	expr     string
	interval time.Duration
}

// parts finds and replaces the rules' parts that can be evaluated on the
// history's server.
type parts struct {
	// recorded are the names the rules record (and the alerts' own
	// series): what reads them must evaluate here.
	recorded map[string]bool
	byKey    map[string]*part
	list     []*part
}

// partPrefix begins every part's series name; nothing else in a replay's
// storage is named so.
const partPrefix = "inferslo_backtest_part_"

func newParts(recorded map[string]bool) *parts {
	return &parts{recorded: recorded, byKey: map[string]*part{}}
}

// rewrite replaces, top down, each largest subexpression of e that the
// server can evaluate at the rule's own evaluation times by a selector of
// its answer. What sits inside a subquery or a range is evaluated at
// other times, so it stays unless the whole subquery moves.
func (ps *parts) rewrite(interval time.Duration, e parser.Expr) (parser.Expr, error) {
	if ps.movable(e) {
		return ps.selector(interval, e), nil
	}
	var err error
	visit := func(x parser.Expr) parser.Expr {
		if err != nil || x == nil {
			return x
		}
		var y parser.Expr
		y, err = ps.rewrite(interval, x)
		return y
	}
	switch n := e.(type) {
	case *parser.AggregateExpr:
		n.Expr = visit(n.Expr)
		n.Param = visit(n.Param)
	case *parser.BinaryExpr:
		n.LHS = visit(n.LHS)
		n.RHS = visit(n.RHS)
	case *parser.Call:
		for i, a := range n.Args {
			n.Args[i] = visit(a)
		}
	case *parser.ParenExpr:
		n.Expr = visit(n.Expr)
	case *parser.UnaryExpr:
		n.Expr = visit(n.Expr)
	}
	return e, err
}

func (ps *parts) selector(interval time.Duration, e parser.Expr) parser.Expr {
	expr := e.String()
	key := interval.String() + " " + expr
	p := ps.byKey[key]
	if p == nil {
		p = &part{name: fmt.Sprintf("%s%d", partPrefix, len(ps.list)), expr: expr, interval: interval}
		ps.byKey[key] = p
		ps.list = append(ps.list, p)
	}
	return &parser.VectorSelector{Name: p.name, LabelMatchers: []*labels.Matcher{
		labels.MustNewMatcher(labels.MatchEqual, query.MetricNameLabel, p.name),
	}}
}

// movable tells whether the server can evaluate e in the rule's place: an
// instant vector that reads raw series only, at least one, and whose
// answer carries no metric name (which the part's own name would replace).
func (ps *parts) movable(e parser.Expr) bool {
	if e.Type() != parser.ValueTypeVector || !dropsName(e) {
		return false
	}
	sels := query.Selectors(e)
	for _, vs := range sels {
		name := ""
		for _, m := range vs.LabelMatchers {
			if m.Name == query.MetricNameLabel && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		// A selector without a fixed name may select a recording.
		if name == "" || ps.recorded[name] || strings.HasPrefix(name, "ALERTS") || strings.HasPrefix(name, partPrefix) {
			return false
		}
	}
	return len(sels) > 0
}

// keepsName tells whether a function's answer may keep the metric name of
// what it reads; every other function of an instant vector drops it.
func keepsName(fn string) bool {
	switch fn {
	case "last_over_time", "first_over_time", "sort", "sort_desc", "sort_by_label", "sort_by_label_desc",
		"label_replace", "label_join", "timestamp":
		return true
	}
	return false
}

// dropsName tells whether e's answer never carries a metric name, so the
// part's name can stand in for it without changing what the rule sees.
func dropsName(e parser.Expr) bool {
	switch n := e.(type) {
	case *parser.AggregateExpr:
		switch n.Op {
		case parser.TOPK, parser.BOTTOMK, parser.LIMITK, parser.LIMIT_RATIO:
			return false
		}
		return true
	case *parser.Call:
		return !keepsName(n.Func.Name)
	case *parser.ParenExpr:
		return dropsName(n.Expr)
	case *parser.BinaryExpr:
		switch {
		case n.Op.IsSetOperator():
			return dropsName(n.LHS) && (n.Op != parser.LOR || dropsName(n.RHS))
		case n.Op.IsComparisonOperator() && !n.ReturnBool:
			// A filter keeps the vector side's labels.
			if n.LHS.Type() == parser.ValueTypeVector {
				return dropsName(n.LHS)
			}
			return dropsName(n.RHS)
		}
		return true
	}
	return false
}

// planParts counts the series each part answers at to, for chunking: one
// instant query per part.
func (l *loader) planParts(ctx context.Context, ps []*part, to time.Time) ([]int, error) {
	counts := make([]int, len(ps))
	for i, p := range ps {
		v, err := l.instant(ctx, p.expr, to)
		if err != nil {
			return nil, fmt.Errorf("read history: %w; valid: --read raw when the server cannot evaluate the rules' expressions", err)
		}
		counts[i] = len(v)
	}
	return counts, nil
}

// partSeries is where a part's series stands in its answer.
type partSeries struct {
	lset labels.Labels
	last int64
}

// loadPart has the server evaluate p over [from, to] at its interval, in
// chunks of steps steps, and stores the answer as p's series: the values
// as the server computed them (the NaN of an empty ratio too), and a
// staleness marker where a series leaves the answer, as the rules engine
// marks a recording's.
func (l *loader) loadPart(ctx context.Context, p *part, steps int, from, to time.Time) error {
	ms := p.interval.Milliseconds()
	series := map[uint64]*partSeries{}
	err := l.read(ctx, p.expr, steps, from, to, p.interval, func(m prommodel.Matrix, _, _ time.Time) error {
		return l.appendPart(ctx, p, m, series)
	})
	if err != nil {
		return err
	}
	app := l.app(ctx)
	for _, s := range series {
		if s.last+ms <= to.UnixMilli() {
			if _, err := app.Append(0, s.lset, s.last+ms, math.Float64frombits(value.StaleNaN)); err != nil {
				app.Rollback()
				return fmt.Errorf("store %s: %w", safetext.Quote(s.lset.String()), err)
			}
		}
	}
	return app.Commit()
}

func (l *loader) appendPart(ctx context.Context, p *part, m prommodel.Matrix, series map[uint64]*partSeries) error {
	app := l.app(ctx)
	fail := func(err error) error {
		app.Rollback()
		return err
	}
	ms := p.interval.Milliseconds()
	for _, ss := range m {
		if len(ss.Histograms) > 0 {
			return fail(fmt.Errorf("query_range %s: the server answered native histogram samples, which a replay does not store yet; valid: --read raw", p.expr))
		}
		b := labels.NewScratchBuilder(len(ss.Metric) + 1)
		for k, v := range ss.Metric {
			if err := query.CheckLabelSize(string(k), string(v)); err != nil {
				return fail(fmt.Errorf("query_range %s: the server answered a series with %w", p.expr, err))
			}
			if k != query.MetricNameLabel {
				b.Add(string(k), string(v))
			}
		}
		b.Add(query.MetricNameLabel, p.name)
		b.Sort()
		lset := b.Labels()
		h := lset.Hash()
		if l.selected[h] = true; len(l.selected) > l.src.MaxSeries {
			return fail(fmt.Errorf("query_range %s: the server answered more than %d series; valid: a selector narrowed in the spec, or a larger series limit", p.expr, l.src.MaxSeries))
		}
		s := series[h]
		if s == nil {
			s = &partSeries{lset: lset, last: math.MinInt64}
			series[h] = s
			l.stats.Series++
		}
		slices.SortStableFunc(ss.Values, func(a, b prommodel.SamplePair) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
		for _, v := range ss.Values {
			t := int64(v.Timestamp)
			if t <= s.last {
				continue
			}
			if s.last != math.MinInt64 && t > s.last+ms {
				if _, err := app.Append(0, lset, s.last+ms, math.Float64frombits(value.StaleNaN)); err != nil {
					return fail(fmt.Errorf("store %s: %w", safetext.Quote(lset.String()), err))
				}
			}
			if l.stats.Samples++; l.stats.Samples > l.src.MaxSamples {
				return fail(fmt.Errorf("the history holds more than %d samples; valid: a shorter --from/--to range, or a larger --max-samples", l.src.MaxSamples))
			}
			if _, err := app.Append(0, lset, t, float64(v.Value)); err != nil {
				return fail(fmt.Errorf("store %s: %w", safetext.Quote(lset.String()), err))
			}
			s.last = t
			if ft := time.UnixMilli(t); l.stats.First.IsZero() || ft.Before(l.stats.First) {
				l.stats.First = ft
			}
		}
	}
	if err := app.Commit(); err != nil {
		return fmt.Errorf("store samples: %w", err)
	}
	return nil
}
