// Package backtest replays compiled SLO rules over real history: it reads
// the raw series the rules need from a Prometheus-compatible HTTP API,
// stores them in the simulator's in-process Prometheus, records the
// recording rules over the range with range queries, evaluates the alerting
// rules with Prometheus' rules engine at every evaluation time, and reports
// the alerts that would have fired, the SLI and the error budget spent.
package backtest

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/safetext"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/templates"
)

// Options say what to replay and where the history comes from.
type Options struct {
	Source Source
	// From and To bound the reported range. Rules are evaluated from
	// earlier on (see Warmup), so the first alerts see full windows.
	From, To time.Time
	// Text words the alert annotations; nil: the built-in templates.
	Text *templates.Text
	// Rules, when set, are the rule files replayed instead of the set
	// compiled afresh.
	Rules artifact.Set
	// Progress, when set, is told the total steps (requests and replayed
	// days) once known, then called with each step done.
	Progress func(total int) func()
	// Parallel is how many groups replay at once; default GOMAXPROCS.
	Parallel int
	// Scratch is the folder the replay keeps its storage in; "" is the
	// system's temporary folder.
	Scratch string
	// Read says where the rules' reads of raw series evaluate; default
	// ReadServer.
	Read Read
}

// MaxRange bounds the range a backtest reports on: a year and a quarter's
// margin, more than any SLO window or calendar period reads.
const MaxRange = 455 * 24 * time.Hour

// Run backtests the set's SLOs.
func Run(ctx context.Context, set model.Set, opts Options) (*Report, error) {
	src := opts.Source.withDefaults()
	if !opts.From.Before(opts.To) {
		return nil, fmt.Errorf("--from %s is not before --to %s", opts.From.Format(time.RFC3339), opts.To.Format(time.RFC3339))
	}
	if now := time.Now(); opts.To.After(now.Add(time.Minute)) {
		return nil, fmt.Errorf("--to %s is in the future: a backtest reads history; valid: now or a time before it", opts.To.Format(time.RFC3339))
	}
	if opts.To.Sub(opts.From) > MaxRange {
		return nil, fmt.Errorf("--from %s to --to %s is longer than %s; valid: a range of at most %d days", opts.From.Format(time.RFC3339), opts.To.Format(time.RFC3339), model.FormatDuration(MaxRange), MaxRange/(24*time.Hour))
	}
	files := opts.Rules
	if files == nil {
		var err error
		if files, err = irules.Build(set, opts.Text); err != nil {
			return nil, fmt.Errorf("compile rules: %w", err)
		}
	}
	slos := map[string]model.SLO{}
	names := map[string]bool{}
	for _, slo := range set.SLOs {
		slos[slo.Name] = slo
		names[irules.GroupName(slo)] = true
	}
	rp, err := prom.NewReplay(files, func(g string) bool { return names[g] }, opts.Scratch)
	if err != nil {
		return nil, err
	}
	defer rp.Close()
	if len(rp.Groups()) == 0 {
		return nil, fmt.Errorf("no rule group of the SLOs in the rule files")
	}
	// Only the alerts and what they read are evaluated, plus the base
	// window's recordings the report reads: the SLO window's recordings
	// (a 4w subquery at every evaluation) would cost more than all the
	// rest and tell nothing the base window does not.
	rp.Restrict(func(r rules.Rule) bool {
		if _, ok := r.(*rules.AlertingRule); ok {
			return true
		}
		slo, ok := slos[r.Labels().Get(model.LabelSLO)]
		return ok && reportedRecording(r.Name()) && r.Labels().Get(model.LabelWindow) == model.FormatDuration(slo.BaseWindow())
	})
	// The warm-up is the rules' own, wherever their parts evaluate.
	a := analyze(rp.Groups())
	var ps []*part
	switch opts.Read {
	case ReadServer, "":
		recorded := map[string]bool{}
		for _, g := range rp.Groups() {
			for _, r := range g.Rules() {
				if _, ok := r.(*rules.RecordingRule); ok {
					recorded[r.Name()] = true
				}
			}
		}
		moved := newParts(recorded)
		if err := rp.Rewrite(moved.rewrite); err != nil {
			return nil, err
		}
		ps = moved.list
	case ReadRaw:
	default:
		return nil, fmt.Errorf("read %q: valid: %s or %s", opts.Read, ReadServer, ReadRaw)
	}
	reads := analyze(rp.Groups())
	if len(reads.selectors) == 0 && len(ps) == 0 {
		return nil, fmt.Errorf("the rules read no raw series")
	}
	if src.Step <= 0 {
		src.Step = defaultStep(set)
	}
	if len(reads.selectors) > 0 && src.Step*2 > reads.rawRange {
		return nil, fmt.Errorf("--step %s leaves fewer than two samples in the rules' %s rate windows; valid: a step of at most %s", src.Step, reads.rawRange, reads.rawRange/2)
	}
	// Evaluation starts one chain of windows before From, so the longest
	// alert windows hold history when the reported range begins, and reads
	// one rate window (or what the parts reach) more.
	evalFrom := opts.From.Add(-a.warmup).Truncate(a.interval)
	readFrom := evalFrom.Add(-reads.rawRange).Truncate(src.Step)
	partsFrom := evalFrom.Add(-reads.partRange)
	l := &loader{src: src, app: rp.Appender, last: map[uint64]int64{}}
	counts, err := l.plan(ctx, reads.selectors, readFrom, opts.To)
	if err != nil {
		return nil, err
	}
	partCounts, err := l.planParts(ctx, ps, opts.To)
	if err != nil {
		return nil, err
	}
	requests := 0
	steps := make([]int, len(counts))
	for i, n := range counts {
		var c int
		steps[i], c = l.chunks(n, readFrom, opts.To, src.Step)
		requests += c
	}
	partSteps := make([]int, len(ps))
	for i, n := range partCounts {
		var c int
		partSteps[i], c = l.chunks(n, partsFrom.Truncate(ps[i].interval), opts.To, ps[i].interval)
		requests += c
	}
	days := int(opts.To.Sub(evalFrom)/(24*time.Hour)) + 1
	done := func() {}
	if opts.Progress != nil {
		done = opts.Progress(requests + days*len(rp.Groups()))
	}
	l.step = done
	began := time.Now()
	for i, sel := range reads.selectors {
		if counts[i] == 0 {
			continue
		}
		if err := l.load(ctx, sel, steps[i], readFrom, opts.To); err != nil {
			return nil, err
		}
	}
	for i, p := range ps {
		if err := l.loadPart(ctx, p, partSteps[i], partsFrom.Truncate(p.interval), opts.To); err != nil {
			return nil, err
		}
	}
	if l.stats.Samples == 0 {
		return nil, fmt.Errorf("no samples of the rules' series between %s and %s at %s", readFrom.Format(time.RFC3339), opts.To.Format(time.RFC3339), safetext.URL(src.URL))
	}
	// Prometheus would have started evaluating where the history starts.
	if first := l.stats.First.Truncate(a.interval); first.After(evalFrom) {
		evalFrom = first
	}
	l.stats.Read = time.Since(began)
	began = time.Now()
	if err := rp.Record(evalFrom, opts.To); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	alerts, err := replay(ctx, rp, evalFrom, opts.To, opts.Parallel, done)
	if err != nil {
		return nil, err
	}
	l.stats.Replayed = time.Since(began)
	r := &Report{From: opts.From, To: opts.To, Evaluated: evalFrom, Stats: l.stats, Step: src.Step}
	for _, al := range alerts {
		if al.ResolvedAt == nil || !al.ResolvedAt.Before(opts.From) {
			r.Alerts = append(r.Alerts, al)
		}
	}
	sortAlerts(r.Alerts)
	for _, slo := range set.SLOs {
		groups, err := summarize(rp, slo, evalFrom, opts.From, opts.To, r.Alerts)
		if err != nil {
			return nil, fmt.Errorf("slo %s: %w", slo.Name, err)
		}
		r.SLOs = append(r.SLOs, groups...)
	}
	return r, nil
}

// reportedRecording tells whether the report reads a recording's base window.
func reportedRecording(name string) bool {
	return name == model.EventsRate || name == model.BadEventsRate || name == model.ErrorRatio
}

// defaultStep is the shortest scrape interval of the set: every sample a
// rate window is sized for.
func defaultStep(set model.Set) time.Duration {
	step := time.Duration(0)
	for _, slo := range set.SLOs {
		if step == 0 || slo.Scrape() < step {
			step = slo.Scrape()
		}
	}
	step = cmp.Or(step, model.DefaultScrapeInterval)
	return step
}

// analysis is what the loaded rules read.
type analysis struct {
	// selectors are the raw series' selectors, deduplicated, sorted.
	selectors []string
	// rawRange is the longest range over raw series.
	rawRange time.Duration
	// partRange is the longest range over the parts the server evaluates.
	partRange time.Duration
	// warmup is how far back the alerts' windows reach, through recordings.
	warmup time.Duration
	// interval is the longest group interval.
	interval time.Duration
}

func analyze(groups []*rules.Group) analysis {
	recorded := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules() {
			if _, ok := r.(*rules.RecordingRule); ok {
				recorded[r.Name()] = true
			}
		}
	}
	var a analysis
	var recRange time.Duration
	seen := map[string]bool{}
	for _, g := range groups {
		a.interval = max(a.interval, g.Interval())
		for _, r := range g.Rules() {
			parser.Inspect(r.Query(), func(n parser.Node, path []parser.Node) error {
				vs, ok := n.(*parser.VectorSelector)
				if !ok {
					return nil
				}
				rng := reach(path) + vs.OriginalOffset
				if strings.HasPrefix(vs.Name, partPrefix) {
					a.partRange = max(a.partRange, rng)
					return nil
				}
				if recorded[vs.Name] || vs.Name == "ALERTS" {
					// A recording of a window reaches that far back
					// itself: the sums a long window adds read shorter
					// windows' sums at offsets.
					recRange = max(recRange, rng+windowOf(vs))
					return nil
				}
				a.rawRange = max(a.rawRange, rng)
				sel := (&parser.VectorSelector{Name: vs.Name, LabelMatchers: vs.LabelMatchers}).String()
				if !seen[sel] {
					seen[sel] = true
					a.selectors = append(a.selectors, sel)
				}
				return nil
			})
		}
	}
	sort.Strings(a.selectors)
	a.rawRange = max(a.rawRange, a.interval)
	a.warmup = recRange + a.rawRange + a.interval
	return a
}

// windowOf is the window a selector of inferslo's recordings names, or 0.
func windowOf(vs *parser.VectorSelector) time.Duration {
	for _, m := range vs.LabelMatchers {
		if m.Name == model.LabelWindow && m.Type == labels.MatchEqual {
			if d, err := prommodel.ParseDuration(m.Value); err == nil {
				return time.Duration(d)
			}
		}
	}
	return 0
}

// reach is how far back a selector reads through the matrix selectors and
// subqueries around it.
func reach(path []parser.Node) time.Duration {
	var d time.Duration
	for _, n := range path {
		switch n := n.(type) {
		case *parser.MatrixSelector:
			d += n.Range
		case *parser.SubqueryExpr:
			d += n.Range
		}
	}
	return d
}

// replay evaluates every group from from to to at its interval, groups in
// parallel, and returns the alert intervals.
func replay(ctx context.Context, rp *prom.Replay, from, to time.Time, parallel int, done func()) ([]Alert, error) {
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	groups := rp.Groups()
	out := make([][]Alert, len(groups))
	errs := make([]error, len(groups))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = replayGroup(ctx, rp, i, g, from, to, done)
		}()
	}
	wg.Wait()
	if err := cmp.Or(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(out...), nil
}

func replayGroup(ctx context.Context, rp *prom.Replay, i int, g *rules.Group, from, to time.Time, done func()) ([]Alert, error) {
	var closed []Alert
	open := map[uint64]*Alert{}
	start := from.Truncate(g.Interval())
	if start.Before(from) {
		start = start.Add(g.Interval())
	}
	nextDay := start.Add(24 * time.Hour)
	var ts time.Time
	for ts = start; !ts.After(to); ts = ts.Add(g.Interval()) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := rp.Eval(i, ts); err != nil {
			return nil, fmt.Errorf("replay at %s: %w", ts.Format(time.RFC3339), err)
		}
		firing := map[uint64]bool{}
		for _, r := range g.Rules() {
			ar, ok := r.(*rules.AlertingRule)
			if !ok {
				continue
			}
			for _, a := range ar.ActiveAlerts() {
				if a.State != rules.StateFiring {
					continue
				}
				h := a.Labels.Hash()
				firing[h] = true
				if open[h] == nil {
					open[h] = newAlert(ar, a.Labels, ts)
				}
			}
		}
		for h, a := range open {
			if !firing[h] {
				at := ts
				a.ResolvedAt = &at
				closed = append(closed, *a)
				delete(open, h)
			}
		}
		if !ts.Before(nextDay) {
			nextDay = nextDay.Add(24 * time.Hour)
			done()
		}
	}
	for _, a := range open {
		closed = append(closed, *a)
	}
	return closed, nil
}

func newAlert(ar *rules.AlertingRule, lset labels.Labels, at time.Time) *Alert {
	a := &Alert{
		SLO:       lset.Get(model.LabelSLO),
		AlertName: ar.Name(),
		Severity:  lset.Get(model.LabelSeverity),
		Labels:    map[string]string{},
		FiredAt:   at,
	}
	lset.Range(func(l labels.Label) {
		if l.Name != labels.AlertName {
			a.Labels[l.Name] = l.Value
		}
	})
	return a
}

func sortAlerts(as []Alert) {
	slices.SortStableFunc(as, func(a, b Alert) int {
		return cmp.Or(a.FiredAt.Compare(b.FiredAt), cmp.Compare(a.SLO, b.SLO), labels.Compare(labels.FromMap(a.Labels), labels.FromMap(b.Labels)))
	})
}
