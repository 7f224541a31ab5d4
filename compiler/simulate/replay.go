package simulate

import (
	"context"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"

	"github.com/inferslo/inferslo/compiler/artifact"
)

// Replay is the simulation's in-process Prometheus (storage, PromQL engine
// and rules manager) opened for history that comes from elsewhere: a
// backtest loads real samples into it and evaluates the rule groups at
// real times.
type Replay struct {
	h *harness
}

// NewReplay parses rule files and loads the groups keep accepts (all when
// keep is nil) over empty storage. Close releases it.
func NewReplay(files artifact.Set, keep func(group string) bool) (*Replay, error) {
	x, err := indexRules(files)
	if err != nil {
		return nil, err
	}
	if keep != nil {
		x = x.selected(keep)
	}
	h, err := newIndexedHarness(x, false)
	if err != nil {
		return nil, err
	}
	return &Replay{h: h}, nil
}

// Groups are the loaded rule groups, in a stable order.
func (r *Replay) Groups() []*rules.Group { return r.h.groups }

// Restrict keeps, in every group, the rules target accepts and the
// recording rules they read, directly or not; the rest never evaluate.
func (r *Replay) Restrict(target func(rules.Rule) bool) { r.h.restrictRules(target) }

// Appender appends samples to the replay's storage.
func (r *Replay) Appender(ctx context.Context) storage.Appender { return r.h.db.Appender(ctx) }

// Eval evaluates the i-th group once at ts and returns the first rule
// error. Distinct groups may be evaluated concurrently, each in time order.
func (r *Replay) Eval(i int, ts time.Time) error { return evalGroup(r.h.groups[i], ts) }

// Matrix runs an instant query whose result is a range vector (raw
// samples) at ts.
func (r *Replay) Matrix(qs string, ts time.Time) (promql.Matrix, error) {
	res, err := runQuery(r.h.engine.NewInstantQuery(context.Background(), r.h.db, nil, qs, ts))
	if err != nil {
		return nil, err
	}
	return res.Matrix()
}

// Close releases the storage.
func (r *Replay) Close() { r.h.close() }
