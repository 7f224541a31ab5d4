package prom

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

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
	n, err = NewIndexedHarness(x, h.Counted != nil, filepath.Dir(h.dir))
	if err != nil {
		return nil, false, err
	}
	if frozen {
		n.under = h.Queryable()
	} else if err := copySamples(h, n); err != nil {
		n.Close()
		return nil, false, err
	}
	if len(n.Groups) != len(h.Groups) {
		n.Close()
		return nil, false, fmt.Errorf("copy of the rule groups has %d groups, not %d", len(n.Groups), len(h.Groups))
	}
	for i, g := range n.Groups {
		g.CopyState(h.Groups[i])
	}
	n.Stepwise = h.Stepwise
	if err := h.copySpan(n); err != nil {
		n.Close()
		return nil, false, err
	}
	return n, true, nil
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
