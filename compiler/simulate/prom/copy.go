package prom

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// Copy starts a Prometheus holding h's samples and group state. It declines (ok false) while an alert is
// pending or firing: alert instances would be shared between the copies.
// When h is frozen (nothing appends to it any more, and it is closed after
// the copy), the copy reads h's storage beneath its own instead of
// copying every sample.
func (h *Harness) Copy(x RuleIndex, frozen bool) (n *Harness, ok bool, err error) {
	for _, st := range h.AlertStates() {
		if st != rules.StateInactive {
			return nil, false, nil
		}
	}
	var under storage.Queryable
	if frozen {
		under = h.Queryable()
	}
	n, err = h.copy(x, under, math.MaxInt64)
	return n, err == nil, err
}

// CopyAt starts a Prometheus carrying on from h's evaluation at step at,
// the last h ran: it reads h's samples up to at beneath its own (a span
// stores its scrapes and records its rules ahead of its alerts: what h
// holds past at is not read) and takes over h's group state, pending and
// firing alerts included. h is neither evaluated nor appended to again,
// and is closed after the copy.
func (h *Harness) CopyAt(x RuleIndex, at time.Duration) (*Harness, error) {
	maxt := Epoch().Add(at).UnixMilli()
	return h.copy(x, upTo{h.Queryable(), maxt}, maxt)
}

// copy starts a Prometheus evaluating x with h's group state, reading
// under beneath its own samples, or holding a copy of h's when under is
// nil; its spans carry on from h's step at maxt (math.MaxInt64: h's last).
func (h *Harness) copy(x RuleIndex, under storage.Queryable, maxt int64) (*Harness, error) {
	n, err := NewIndexedHarness(x, h.Counted != nil, filepath.Dir(h.dir))
	if err != nil {
		return nil, err
	}
	if under != nil {
		n.under = under
	} else if err := copySamples(h, n); err != nil {
		n.Close()
		return nil, err
	}
	if len(n.Groups) != len(h.Groups) {
		n.Close()
		return nil, fmt.Errorf("copy of the rule groups has %d groups, not %d", len(n.Groups), len(h.Groups))
	}
	for i, g := range n.Groups {
		g.CopyState(h.Groups[i])
	}
	n.Stepwise = h.Stepwise
	if err := h.copySpan(n, maxt); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// upTo reads a storage's samples up to maxt only.
type upTo struct {
	q    storage.Queryable
	maxt int64
}

func (u upTo) Querier(mint, maxt int64) (storage.Querier, error) {
	if mint > u.maxt {
		return storage.NoopQuerier(), nil
	}
	q, err := u.q.Querier(mint, min(maxt, u.maxt))
	if err != nil {
		return nil, err
	}
	return upToQuerier{q, u.maxt}, nil
}

// upToQuerier is a querier of upTo: the engine's hints bound what a
// selection reads, over the querier's own range.
type upToQuerier struct {
	storage.Querier
	maxt int64
}

func (q upToQuerier) Select(ctx context.Context, sorted bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	if hints != nil && hints.End > q.maxt {
		bounded := *hints
		bounded.End = q.maxt
		hints = &bounded
	}
	return q.Querier.Select(ctx, sorted, hints, ms...)
}

// copySamples appends every sample of from's storage to to's.
func copySamples(from, to *Harness) error {
	ctx := context.Background()
	q, err := from.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return fmt.Errorf("copy simulation storage: %w", err)
	}
	defer q.Close()
	set := q.Select(ctx, false, nil, labels.MustNewMatcher(labels.MatchRegexp, query.MetricNameLabel, ".+"))
	app := to.DB.Appender(ctx)
	var it chunkenc.Iterator
	for set.Next() {
		series := set.At()
		lset := series.Labels()
		it = series.Iterator(it)
		var ref storage.SeriesRef
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			switch vt {
			case chunkenc.ValFloat:
				ts, v := it.At()
				ref, err = app.Append(ref, lset, ts, v)
			case chunkenc.ValHistogram:
				ts, hist := it.AtHistogram(nil)
				ref, err = app.AppendHistogram(ref, lset, ts, hist, nil)
			case chunkenc.ValFloatHistogram:
				ts, fh := it.AtFloatHistogram(nil)
				ref, err = app.AppendHistogram(ref, lset, ts, nil, fh)
			}
			if err != nil {
				app.Rollback()
				return fmt.Errorf("copy simulation storage: %w", err)
			}
		}
		if err := it.Err(); err != nil {
			app.Rollback()
			return fmt.Errorf("copy simulation storage: %w", err)
		}
	}
	if err := set.Err(); err != nil {
		app.Rollback()
		return fmt.Errorf("copy simulation storage: %w", err)
	}
	if err := app.Commit(); err != nil {
		return fmt.Errorf("copy simulation storage: %w", err)
	}
	return nil
}
