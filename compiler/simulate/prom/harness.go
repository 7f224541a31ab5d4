package prom

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/inferslo/inferslo/compiler/model"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunks"

	"github.com/inferslo/inferslo/compiler/artifact"
)

// Epoch is where simulated time starts; any fixed instant works, a recent
// one keeps timestamps readable in debugging.
func Epoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// memLoader serves rule groups parsed once (a ruleIndex) to the rules
// manager, so a simulation never writes files, RunFiles can test bytes as
// given, and each harness loads only the groups it runs.
type memLoader struct {
	files map[string]*rulefmt.RuleGroups
	p     parser.Parser
}

func (l memLoader) Load(id string, _ bool, _ prommodel.ValidationScheme) (*rulefmt.RuleGroups, []error) {
	g, ok := l.files[id]
	if !ok {
		return nil, []error{fmt.Errorf("no rule file %s", id)}
	}
	return g, nil
}

func (l memLoader) Parse(q string) (parser.Expr, error) { return l.p.ParseExpr(q) }

// Harness is one isolated Prometheus: a TSDB head, the PromQL engine and the
// rules manager, driven by simulated time.
type Harness struct {
	dir    string
	DB     *tsdb.DB
	Engine *promql.Engine
	Groups []*rules.Group
	opts   *rules.ManagerOptions
	// Counted sums engine query statistics when set (cost runs).
	Counted *QueryCount
	// Sched, when set, evaluates each rule only at the steps it is read.
	Sched *Schedule
	// under, when set, is the storage of a harness this one was copied
	// from, read beneath DB's own samples.
	under storage.Queryable
	// Stepwise makes EvalSpan evaluate step by step wherever it could
	// span (for tests comparing the two).
	Stepwise bool
	// span is what EvalSpan carries from span to span.
	span spanState
}

// QueryCount accumulates what rule evaluations cost the engine.
type QueryCount struct {
	queries int
	Samples int64
	// Projected scales each query's samples from the history that exists
	// to the query's full range.
	Projected int64
	History   time.Duration
	Ranges    map[string]Reach
	// ByQuery, when set, sums Projected by query text, so a cost names
	// the rule that reads what it counts.
	ByQuery map[string]int64
}

func (c *QueryCount) add(qs string, samples int64, t time.Time) {
	c.queries++
	c.Samples += samples
	r, ok := c.Ranges[qs]
	if !ok {
		r = projectRange(qs)
		if c.Ranges != nil {
			c.Ranges[qs] = r
		}
	}
	before := c.Projected
	defer func() {
		if c.ByQuery != nil {
			c.ByQuery[qs] += c.Projected - before
		}
	}()
	switch {
	case c.History <= 0:
		c.Projected += samples
	case r.step > 0:
		// A subquery reads its inner series once per step, at multiples of
		// the step: the steps since the history began found data, and the
		// full range has range/step of them.
		first := Epoch().Add(-c.History).UnixMilli()
		step := r.step.Milliseconds()
		// A subquery shorter than the history already read all its steps.
		if k := min(t.UnixMilli()/step-(first+step-1)/step+1, int64(r.rng/r.step)); k > 0 {
			c.Projected += samples * int64(r.rng/r.step) / k
		}
	case r.rng > c.History:
		c.Projected += int64(float64(samples) * float64(r.rng) / float64(c.History))
	case len(r.offsets) > 0:
		// Selectors offset past the history read nothing yet; at full
		// history each reads as many samples as one that found data (the
		// sums a window adds read one series at several offsets).
		found := 0
		for _, o := range r.offsets {
			if o < c.History {
				found++
			}
		}
		if found > 0 {
			c.Projected += samples * int64(len(r.offsets)) / int64(found)
		} else {
			c.Projected += samples
		}
	default:
		c.Projected += samples
	}
}

// NewHarness parses files and loads the groups keep selects; see
// newIndexedHarness.
func NewHarness(files map[string][]byte, keep func(string) bool, count bool, scratch string) (*Harness, error) {
	set := make(artifact.Set, 0, len(files))
	for path, data := range files {
		set = append(set, artifact.File{Path: path, Data: data})
	}
	x, err := IndexRules(set)
	if err != nil {
		return nil, err
	}
	return NewIndexedHarness(x.Selected(keep), count, scratch)
}

// NewIndexedHarness starts an empty Prometheus evaluating the given groups,
// its storage in a folder of its own in scratch ("" for the system's
// temporary folder); count records query statistics.
func NewIndexedHarness(x RuleIndex, count bool, scratch string) (*Harness, error) {
	dir, err := os.MkdirTemp(scratch, "inferslo-sim-")
	if err != nil {
		return nil, fmt.Errorf("create simulation storage: %w", err)
	}
	opts := tsdb.DefaultOptions()
	// Everything stays in the in-memory head: no WAL, no compaction, so a
	// simulated week costs memory only.
	opts.WALSegmentSize = -1
	opts.MinBlockDuration = int64(365 * 24 * time.Hour / time.Millisecond)
	opts.MaxBlockDuration = opts.MinBlockDuration
	opts.RetentionDuration = 0
	// A simulation holds a few hundred series; the defaults' series map
	// and chunk write buffer (9 MB) would dominate its memory.
	opts.StripeSize = 256
	// Isolation keeps a ring of append IDs per series that every read
	// walks; a replay's appends are committed before anything reads them,
	// and the walk took most of a month's replay.
	opts.IsolationDisabled = true
	opts.HeadChunksWriteBufferSize = chunks.MinWriteBufferSize
	// A query decodes a series' chunk from its start: short chunks spare
	// the autoscaler's instant queries, every 15s over a 2m window, most
	// of a 120-sample chunk (half an hour of 15s scrapes).
	opts.SamplesPerChunk = 32
	db, err := tsdb.Open(dir, promslog.NewNopLogger(), nil, opts, nil)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("open simulation storage: %w", err)
	}
	h := &Harness{dir: dir, DB: db}
	h.Engine = promql.NewEngine(promql.EngineOpts{
		Logger:               promslog.NewNopLogger(),
		MaxSamples:           200_000_000,
		Timeout:              time.Hour,
		EnableAtModifier:     true,
		EnableNegativeOffset: true,
		Parser:               newCachedParser(query.NewParser()),
	})
	if count {
		h.Counted = &QueryCount{}
	}
	h.opts = &rules.ManagerOptions{
		QueryFunc:  h.queryFunc(),
		Appendable: db,
		Queryable:  db,
		Context:    context.Background(),
		NotifyFunc: func(context.Context, string, ...*rules.Alert) {},
		Logger:     promslog.NewNopLogger(),
	}
	groups, err := loadGroups(x, h.opts)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.Groups = groups
	return h, nil
}

// Restrict keeps, in every group, only the recording rules that the target
// rules read, directly or not, and the targets: evaluating that closure
// records exactly what the whole group would for those series.
func (h *Harness) Restrict(target func(*rules.RecordingRule) bool) {
	h.restrictRules(func(r rules.Rule) bool {
		rr, ok := r.(*rules.RecordingRule)
		return ok && target(rr)
	})
}

// RestrictTo keeps only the recording rules the expressions read, the
// alerting rules alerts accepts (nil: none), and the recording rules
// those read, directly or not: a replay that reads nothing else evaluates
// no more.
func (h *Harness) RestrictTo(exprs []parser.Expr, alerts func(*rules.AlertingRule) bool) {
	h.restrictRules(func(r rules.Rule) bool {
		switch r := r.(type) {
		case *rules.RecordingRule:
			return slices.ContainsFunc(exprs, func(e parser.Expr) bool { return reads(e, r) })
		case *rules.AlertingRule:
			return alerts != nil && alerts(r)
		}
		return false
	})
}

// restrictRules is restrict for any rule, alerting ones included.
func (h *Harness) restrictRules(target func(rules.Rule) bool) {
	// The closure spans groups: a chained group's parts read each other.
	var all []rules.Rule
	for _, g := range h.Groups {
		all = append(all, g.Rules()...)
	}
	need := make(map[rules.Rule]bool, len(all))
	for _, r := range all {
		need[r] = target(r)
	}
	for changed := true; changed; {
		changed = false
		for j := len(all) - 1; j >= 0; j-- {
			if !need[all[j]] {
				continue
			}
			for _, r := range all {
				rr, ok := r.(*rules.RecordingRule)
				if ok && !need[r] && reads(all[j].Query(), rr) {
					need[r], changed = true, true
				}
			}
		}
	}
	for i, g := range h.Groups {
		var kept []rules.Rule
		for _, r := range g.Rules() {
			if need[r] {
				kept = append(kept, r)
			}
		}
		h.Groups[i] = rules.NewGroup(rules.GroupOptions{Name: g.Name(), File: g.File(), Interval: g.Interval(), Rules: kept, Opts: h.opts})
	}
}

// reads tells whether some selector of expr may select what rule records.
func reads(expr parser.Expr, rule *rules.RecordingRule) bool {
	found := false
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok && !found {
			found = selects(vs, rule)
		}
		return nil
	})
	return found
}

// Reads returns whether some selector of h's rules, or of the other
// expressions, matches a series: samples of a series it rejects change
// none of their answers.
func (h *Harness) Reads(others ...parser.Expr) func(labels.Labels) bool {
	var sels [][]*labels.Matcher
	for _, g := range h.Groups {
		for _, r := range g.Rules() {
			others = append(others, r.Query())
		}
	}
	for _, e := range others {
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok {
				sels = append(sels, vs.LabelMatchers)
			}
			return nil
		})
	}
	return func(ls labels.Labels) bool {
		return slices.ContainsFunc(sels, func(ms []*labels.Matcher) bool {
			return !slices.ContainsFunc(ms, func(m *labels.Matcher) bool { return !m.Matches(ls.Get(m.Name)) })
		})
	}
}

// selects tells whether vs may select what rule records. Labels a rule
// inherits from its input are unknown here and match any matcher, so
// callers err on the side of keeping rules.
func selects(vs *parser.VectorSelector, rule *rules.RecordingRule) bool {
	for _, m := range vs.LabelMatchers {
		v := rule.Labels().Get(m.Name)
		if m.Name == query.MetricNameLabel {
			v = rule.Name()
		} else if !rule.Labels().Has(m.Name) {
			continue
		}
		if !m.Matches(v) {
			return false
		}
	}
	return true
}

// queryFunc is rules.EngineQueryFunc plus query statistics.
func (h *Harness) queryFunc() rules.QueryFunc {
	return func(ctx context.Context, qs string, t time.Time) (promql.Vector, error) {
		q, err := h.Engine.NewInstantQuery(ctx, h.Queryable(), nil, qs, t)
		if err != nil {
			return nil, err
		}
		defer q.Close()
		res := q.Exec(ctx)
		if res.Err != nil {
			return nil, res.Err
		}
		if h.Counted != nil {
			h.Counted.add(qs, q.Stats().Samples.TotalSamples, t)
		}
		switch v := res.Value.(type) {
		case promql.Vector:
			return v, nil
		case promql.Scalar:
			return promql.Vector{promql.Sample{T: v.T, F: v.V, Metric: labels.Labels{}}}, nil
		default:
			return nil, fmt.Errorf("rule result is not a vector or scalar")
		}
	}
}

// Queryable is what the harness' queries read: its storage, over that of
// the harness it was copied from, if any.
func (h *Harness) Queryable() storage.Queryable {
	if h.under == nil {
		return h.DB
	}
	return stacked{under: h.under, over: h.DB}
}

// stacked reads two storages as one: a series in both has the samples of
// both.
type stacked struct{ under, over storage.Queryable }

func (s stacked) Querier(mint, maxt int64) (storage.Querier, error) {
	u, err := s.under.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	o, err := s.over.Querier(mint, maxt)
	if err != nil {
		u.Close()
		return nil, err
	}
	return storage.NewMergeQuerier([]storage.Querier{u, o}, nil, storage.ChainedSeriesMerge), nil
}

func (h *Harness) Close() {
	if h.DB != nil {
		h.DB.Close()
	}
	os.RemoveAll(h.dir)
}

// Eval runs every group once at simulated time t and returns the first rule
// error, which means the rules themselves are broken.
func (h *Harness) Eval(t time.Duration) error {
	if h.Sched != nil {
		return h.Sched.run(h, int(t/h.Sched.eval))
	}
	// The next span starts from what this evaluation wrote (EvalSpan).
	h.span.recorded, h.span.alerted = nil, nil
	ts := Epoch().Add(t)
	for _, g := range h.Groups {
		if err := evalGroup(g, ts); err != nil {
			return err
		}
	}
	return nil
}

// evalGroup runs g once at ts and returns its first rule error.
func evalGroup(g *rules.Group, ts time.Time) error {
	g.Eval(context.Background(), ts)
	for _, r := range g.Rules() {
		if err := r.LastError(); err != nil {
			return fmt.Errorf("rule %s in group %s: %w", r.Name(), g.Name(), err)
		}
	}
	return nil
}

// Query runs an instant query at simulated time t.
func (h *Harness) Query(qs string, t time.Duration) (promql.Vector, error) {
	res, err := runQuery(h.Engine.NewInstantQuery(context.Background(), h.Queryable(), nil, qs, Epoch().Add(t)))
	if err != nil {
		return nil, err
	}
	return res.Vector()
}

// QueryMatrix runs a range-vector instant query (every raw sample).
func (h *Harness) QueryMatrix(qs string, t time.Duration) (promql.Matrix, error) {
	res, err := runQuery(h.Engine.NewInstantQuery(context.Background(), h.Queryable(), nil, qs, Epoch().Add(t)))
	if err != nil {
		return nil, err
	}
	return res.Matrix()
}

// runQuery runs a query just made and releases it.
func runQuery(q promql.Query, err error) (*promql.Result, error) {
	if err != nil {
		return nil, err
	}
	defer q.Close()
	res := q.Exec(context.Background())
	return res, res.Err
}

// AlertStates reads the state of every alert instance after an evaluation:
// key is alert name plus severity.
func (h *Harness) AlertStates() map[AlertKey]rules.AlertState {
	out := map[AlertKey]rules.AlertState{}
	h.eachAlert(func(key AlertKey, active []*rules.Alert) {
		st := rules.StateInactive
		for _, a := range active {
			if a.State > st {
				st = a.State
			}
		}
		if st > out[key] {
			out[key] = st
		}
	})
	return out
}

// eachAlert calls f with every alerting rule's key and active alerts.
func (h *Harness) eachAlert(f func(key AlertKey, active []*rules.Alert)) {
	for _, g := range h.Groups {
		for _, r := range g.Rules() {
			if ar, ok := r.(*rules.AlertingRule); ok {
				f(alertKeyOf(ar), ar.ActiveAlerts())
			}
		}
	}
}

type AlertKey struct{ Name, Severity string }

// alertKeyOf keys an alerting rule by its name and tier: burn_tier names
// the tier whatever the severity label's value.
func alertKeyOf(ar *rules.AlertingRule) AlertKey {
	sev := ar.Labels().Get(model.LabelBurnTier)
	if sev == "" {
		sev = ar.Labels().Get(model.LabelSeverity)
	}
	return AlertKey{Name: ar.Name(), Severity: sev}
}

func (k AlertKey) String() string {
	if k.Severity == "" {
		return k.Name
	}
	return fmt.Sprintf("%s{severity=%q}", k.Name, k.Severity)
}

// Reach is how far back a query reads: its longest range, and the step
// when that range is a subquery's; or, for a query of instant selectors
// only, their offsets.
type Reach struct {
	rng, step time.Duration
	offsets   []time.Duration
}

// projectRange is the longest range a query reads, of a range selector or
// a subquery.
func projectRange(qs string) Reach {
	expr, err := query.NewParser().ParseExpr(qs)
	if err != nil {
		return Reach{}
	}
	var longest Reach
	var offsets []time.Duration
	parser.Inspect(expr, func(n parser.Node, path []parser.Node) error {
		switch m := n.(type) {
		case *parser.VectorSelector:
			if len(path) == 0 {
				offsets = append(offsets, m.OriginalOffset)
				return nil
			}
			switch path[len(path)-1].(type) {
			case *parser.MatrixSelector, *parser.SubqueryExpr:
			default:
				offsets = append(offsets, m.OriginalOffset)
			}
		case *parser.MatrixSelector:
			if m.Range > longest.rng {
				longest = Reach{rng: m.Range}
			}
		case *parser.SubqueryExpr:
			if m.Range > longest.rng && m.Step > 0 {
				longest = Reach{rng: m.Range, step: m.Step}
			}
		}
		return nil
	})
	if longest.rng == 0 {
		longest.offsets = offsets
	}
	return longest
}

// sortGroups orders groups by name, and the parts of a chained group last
// part first: each part then reads what the part before it recorded at the
// previous evaluation, as late as a ruler evaluating the groups on their
// own schedules ever reads it.
func sortGroups(g []*rules.Group) {
	sort.Slice(g, func(i, j int) bool {
		a, pa := model.ChainOf(g[i].Name())
		b, pb := model.ChainOf(g[j].Name())
		if a != b {
			return a < b
		}
		return pa > pb
	})
}
