package engine

import (
	"cmp"
	"fmt"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// IsNative tells whether the engine's latency histograms are native.
func (e *Engine) IsNative() bool { return e.HistogramType == Native }

// As returns the engine scraped with histograms of type t (classic or
// native; empty: the engine's own).
func (e *Engine) As(t string) (*Engine, error) {
	t = cmp.Or(t, e.HistogramType)
	if t == Native {
		return e.AsNative()
	}
	if e.IsNative() {
		c := *e
		c.HistogramType = Classic
		return &c, nil
	}
	return e, nil
}

// AsNative returns the engine as scraped with native histograms: a native
// histogram is one series with no _count, so queries that count a
// histogram's observations from h_count (OpenTelemetry's errors and
// requests) read histogram_count(h) instead.
func (e *Engine) AsNative() (*Engine, error) {
	out := e.clone()
	out.HistogramType = Native
	families := map[string]string{}
	for _, h := range e.Histograms {
		families[h.Metric+"_count"] = h.Metric
	}
	for _, q := range []*string{&out.Errors.Total, &out.Errors.Bad, &out.Requests} {
		if *q == "" {
			continue
		}
		rewritten, err := countsAsNative(*q, families)
		if err != nil {
			return nil, fmt.Errorf("engine %s: %w", e.ID, err)
		}
		*q = rewritten
	}
	return out, nil
}

// countsAsNative replaces every selector of a histogram's _count series by
// histogram_count of the histogram's own series, same matchers.
func countsAsNative(q string, families map[string]string) (string, error) {
	expr, err := query.NewParser().ParseExpr(q)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", q, err)
	}
	var swap func(e parser.Expr) parser.Expr
	swap = func(e parser.Expr) parser.Expr {
		switch n := e.(type) {
		case *parser.VectorSelector:
			family, ok := families[SelectedName(n)]
			if !ok {
				return n
			}
			c := *n
			if c.Name != "" {
				c.Name = family
			}
			c.LabelMatchers = nil
			for _, m := range n.LabelMatchers {
				if m.Name == query.MetricNameLabel {
					m = labels.MustNewMatcher(labels.MatchEqual, query.MetricNameLabel, family)
				}
				c.LabelMatchers = append(c.LabelMatchers, m)
			}
			return &parser.Call{Func: parser.Functions["histogram_count"], Args: parser.Expressions{&c}}
		case *parser.AggregateExpr:
			c := *n
			c.Expr = swap(n.Expr)
			return &c
		case *parser.BinaryExpr:
			c := *n
			c.LHS, c.RHS = swap(n.LHS), swap(n.RHS)
			return &c
		case *parser.ParenExpr:
			return &parser.ParenExpr{Expr: swap(n.Expr)}
		}
		return e
	}
	return swap(expr).String(), nil
}

// SelectedName is the metric name a selector selects, written before the
// braces or, for a UTF-8 name, inside them; empty when it selects no one
// name.
func SelectedName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == query.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}
