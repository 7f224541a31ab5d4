package timeline

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/compiler/simulate/workload"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

// serviceReplay replays one service's SLOs in lockstep, so their charts
// share one time axis.
type serviceReplay struct {
	service string
	opts    TimelineOptions
	// rules are the service's rule groups by name.
	rules map[string]prom.RuleIndex

	sims    []*replaySim
	series  map[string][]TimeSeries
	alerts  []AlertInterval
	burn    *Burn
	skipped []string
	end     time.Duration
}

// replaySim is one SLO's harness during a replay.
type replaySim struct {
	slo  model.SLO
	h    *prom.Harness
	d    *workload.Driver
	eval time.Duration
	rate float64 // burn rate during the burn
	// healthy drive the groups of a grouped SLO other than d's, which
	// burns: they stay at the healthy rate throughout.
	healthy []*workload.Driver
	// group names d's group of a grouped SLO (`model_name="vllm-a"`).
	group string
	// severity is the tier the burn must fire ("" when none can), and
	// deadline how long the burn may last before giving up on it: twice
	// the workbook's predicted delay, as in `inferslo test`.
	severity string
	deadline time.Duration
	// full is the SLO's group; base only its base-window recordings and
	// the sums every longer window is built from (see run).
	full, base []*rules.Group
	// feedsFull are the other SLOs' recordings full reads (see feed).
	feedsFull []feed
	// names are the slo label values the harness records (see
	// recordedSLOs).
	names []string
	// gauges are the engine gauges this harness carries, per pod.
	gauges []gaugeSeries
	refs   []storage.SeriesRef
	open   map[groupAlert]time.Duration
	// ahead are the alert states at each step evaluated ahead as one
	// span (evalAhead), up to aheadTo.
	ahead map[time.Duration]map[groupAlert]rules.AlertState
	// aheadTo is the last step evaluated ahead.
	aheadTo time.Duration
}

// groupAlert is an alert of one group (empty for an ungrouped SLO).
type groupAlert struct {
	prom.AlertKey
	group string
}

type gaugeSeries struct {
	labels labels.Labels
	pod    int
	kind   string // waiting, running, kv
}

func (r *serviceReplay) close() {
	for _, s := range r.sims {
		s.h.Close()
	}
}

func (r *serviceReplay) replay(slos []model.SLO, queries []string, parsed []parser.Expr) error {
	defer r.close()
	// Each engine and selector's gauges and token counters ride with its
	// first SLO, so a service of several engines shows each one's load.
	signalled := map[string]bool{}
	for _, slo := range slos {
		if slo.SLI.Raw != nil {
			r.skipped = append(r.skipped, slo.Name+": a raw-ratio SLI has no event counts to synthesize")
			continue
		}
		var source string
		if inf := slo.Inference; inf != nil {
			source = inf.Engine + "\x00" + inf.Selector
		}
		s, err := r.newSim(slo, !signalled[source])
		if err != nil {
			return fmt.Errorf("slo %s: %w", slo.Name, err)
		}
		if len(s.gauges) > 0 {
			signalled[source] = true
		}
		r.sims = append(r.sims, s)
	}
	if len(r.sims) == 0 {
		return nil
	}
	r.link()
	if err := r.run(); err != nil {
		return err
	}
	return r.query(queries, parsed)
}

func (r *serviceReplay) newSim(slo model.SLO, signals bool) (*replaySim, error) {
	h, err := prom.NewIndexedHarness(r.rules[irules.GroupName(slo)], false, r.opts.Scratch)
	if err != nil {
		return nil, err
	}
	s := &replaySim{slo: slo, h: h, open: map[groupAlert]time.Duration{}, aheadTo: -1}
	if len(h.Groups) == 0 {
		h.Close()
		return nil, fmt.Errorf("no rule group %s in the rule files", irules.GroupName(slo))
	}
	s.eval = h.Groups[0].Interval()
	// A started Prometheus marks its alerts restored before it writes
	// ALERTS series; the dashboards' alert panels read those.
	for _, g := range h.Groups {
		for _, rule := range g.Rules() {
			if ar, ok := rule.(*rules.AlertingRule); ok {
				ar.SetRestored(true)
			}
		}
	}
	s.full = append([]*rules.Group(nil), h.Groups...)
	baseWindow := model.FormatDuration(slo.BaseWindow())
	// Longer windows add sums recorded at every evaluation, read at
	// offsets: those are kept too.
	h.Restrict(func(rr *rules.RecordingRule) bool {
		return rr.Labels().Get(model.LabelWindow) == baseWindow || rr.Name() == irules.EventsSums || rr.Name() == irules.BadEventsSums
	})
	s.base, h.Groups = h.Groups, s.full
	w, groups, err := replayWorkloads(slo, r.opts.Shape)
	if err != nil {
		h.Close()
		return nil, err
	}
	if signals && slo.Inference != nil {
		s.gauges = addSignals(slo, w)
	}
	scrape := slo.Scrape()
	budget := slo.ErrorBudget().Float()
	s.d = workload.NewDriver(h, w, budget, scrape, slo.BaseWindow()+2*scrape)
	if len(groups) > 0 {
		s.group = groups[0].Name
		for _, g := range groups[1:] {
			s.healthy = append(s.healthy, workload.NewDriver(h, g.Workload, budget, scrape, slo.BaseWindow()+2*scrape))
		}
	}
	s.refs = make([]storage.SeriesRef, len(s.gauges))
	// The fast burn of `inferslo test`: twice the largest factor of the
	// tier it targets, kept below a 100% error ratio. The page tier is the
	// target; an SLO that pages nobody burns its quickest ticket tier.
	s.rate = math.Min(10, 1/budget)
	var best time.Duration = -1
	for _, tier := range slo.Alerting.Tiers {
		if hasPage(slo) && tier.Severity != model.PageTier {
			continue
		}
		fs := predict.Factors(tier)
		maxF := fs[len(fs)-1]
		rate := math.Min(2*maxF, (maxF+1/budget)/2)
		d, ok := predict.TierDetect(tier, r.opts.Healthy, workload.HealthyBurn, rate, nil)
		if !ok {
			continue
		}
		if delay := 2 * (d + tier.For + slo.BaseWindow() + s.eval); best < 0 || delay < best {
			best, s.rate, s.severity, s.deadline = delay, rate, tier.Severity, delay
		}
	}
	return s, nil
}

// addSignals adds the engine's token counters to a workload (linear in
// requests, like every workload series) and returns the gauges to write
// beside it, one set per pod.
func addSignals(slo model.SLO, w *synth.Workload) []gaugeSeries {
	inf := slo.Inference
	base := map[string]string{}
	if inf.Selector != "" {
		if ms, err := query.NewParser().ParseMetricSelector("{" + inf.Selector + "}"); err == nil {
			if v, err := synth.Satisfying(ms); err == nil {
				base = v
			}
		}
	}
	have := map[string]bool{}
	for _, s := range w.Series {
		have[s.Labels.Get(query.MetricNameLabel)] = true
	}
	mk := func(name string, pod int) labels.Labels {
		b := labels.NewBuilder(labels.FromMap(base))
		b.Set(query.MetricNameLabel, name)
		b.Set("pod", fmt.Sprintf("sim-%d", pod))
		b.Set("instance", fmt.Sprintf("sim-%d:8000", pod))
		return b.Labels()
	}
	sig := inf.Signals
	// Tokens per request: a chat-sized prompt and answer.
	for _, c := range []struct {
		name string
		per  float64
	}{{sig.PromptTokens, 900}, {sig.GenerationTokens, 300}} {
		if c.name == "" || have[c.name] {
			continue
		}
		for pod := 0; pod < w.Pods; pod++ {
			w.Series = append(w.Series, synth.Series{Labels: mk(c.name, pod), Pod: pod, CoefN: c.per})
		}
	}
	var out []gaugeSeries
	for _, g := range []struct{ name, kind string }{
		{sig.QueueDepth, "waiting"}, {sig.Running, "running"}, {sig.KVCacheUsage, "kv"},
	} {
		if g.name == "" || have[g.name] {
			continue
		}
		for pod := 0; pod < w.Pods; pod++ {
			out = append(out, gaugeSeries{labels: mk(g.name, pod), pod: pod, kind: g.kind})
		}
	}
	return out
}

// dailyLoad is the relative traffic at t: a daily cycle, quietest at
// midnight of the simulated day, 1.4x at noon.
func dailyLoad(t time.Duration) float64 {
	return 1 - 0.4*math.Cos(2*math.Pi*float64(t)/float64(24*time.Hour))
}

func hasPage(slo model.SLO) bool {
	_, ok := predict.TierBySeverity(slo, model.PageTier)
	return ok
}

// healthyRate wobbles the healthy burn rate between 0.3 and 0.7, below
// every alert factor.
func healthyRate(t time.Duration) float64 {
	return workload.HealthyBurn + 0.2*math.Sin(2*math.Pi*float64(t)/float64(5*time.Hour))
}

// run drives every harness of the service from 0 to the end of the
// scenario, evaluating each at its group's interval.
func (r *serviceReplay) run() error {
	step := r.sims[0].eval
	var deadline time.Duration
	anyTarget := false
	for _, s := range r.sims {
		if s.eval < step {
			step = s.eval
		}
		if s.severity != "" {
			anyTarget = true
			if s.deadline > deadline {
				deadline = s.deadline
			}
		}
	}
	if !anyTarget {
		deadline = time.Hour
	}
	burnFrom := r.opts.Healthy
	burnTo := time.Duration(math.MaxInt64)
	var resolvedAt time.Duration = -1
	burning := func(t time.Duration) bool { return !r.opts.SkipBurn && t > burnFrom && t <= burnTo }
	end := r.opts.Healthy
	if !r.opts.SkipBurn {
		end = burnFrom + deadline + r.opts.Recovery
	}
	// Far from the burn, only the base-window recordings and the sums are
	// recorded between query steps: longer windows add up sums, which stay
	// as dense as Prometheus would record them, so their values at the
	// query steps are exact. That history is recorded by range queries
	// once the series are written (recordHistory), and the replay is many
	// times faster.
	fineFrom := r.opts.Healthy - time.Hour
	if r.opts.SkipBurn {
		fineFrom = end + 1
	}
	if r.opts.everyRule {
		fineFrom = 0
	}
	order := r.evalOrder()
	recorded := false
	var t time.Duration
	for t = 0; t <= end; t += step {
		if t >= fineFrom && !recorded && t > 0 {
			if err := r.recordHistory(t, order); err != nil {
				return err
			}
		}
		recorded = recorded || t >= fineFrom
		for _, s := range order {
			if t%s.eval != 0 {
				continue
			}
			if st, ok := s.ahead[t]; ok && t <= s.aheadTo {
				s.apply(st, t, r)
				continue
			}
			s.h.Groups = s.full
			load := func(at time.Duration) (float64, float64) {
				rps := dailyLoad(at) * r.opts.RPS
				if burning(at) {
					return rps, s.rate
				}
				return rps, healthyRate(at)
			}
			advance := func(t time.Duration) error {
				if err := s.d.Advance(t, load, nil); err != nil {
					return err
				}
				for _, d := range s.healthy {
					if err := d.Advance(t, func(at time.Duration) (float64, float64) {
						return dailyLoad(at) * r.opts.RPS, healthyRate(at)
					}, nil); err != nil {
						return err
					}
				}
				return s.writeGauges(t, dailyLoad(t), burning(t))
			}
			if err := advance(t); err != nil {
				return err
			}
			if !recorded {
				continue
			}
			// Before the burn the traffic is healthy whatever the alerts
			// do: the fine hour before it is evaluated as one span.
			if t < burnFrom && !r.opts.everyRule && s.aheadTo < t {
				if err := s.evalAhead(t, burnFrom-burnFrom%s.eval, t, advance); err != nil {
					return fmt.Errorf("slo %s: %w", s.slo.Name, err)
				}
				if st, ok := s.ahead[t]; ok {
					s.apply(st, t, r)
					continue
				}
			}
			if err := s.copyFeeds(s.feedsFull, t); err != nil {
				return err
			}
			if err := s.h.Eval(t); err != nil {
				return fmt.Errorf("slo %s at +%s: %w", s.slo.Name, model.FormatDuration(t), err)
			}
			s.apply(s.states(), t, r)
			// After the burn the traffic is healthy whatever the alerts
			// do, so the rest of s's tail is evaluated ahead as one span.
			if burnTo != math.MaxInt64 && t > burnTo && !r.opts.everyRule && s.aheadTo < t {
				// The last step the loop can reach: the first at or after
				// the end of the recovery, within the scenario.
				stop := burnTo + r.opts.Recovery
				tail := min(end-end%step, (stop+step-1)/step*step)
				if err := s.evalAhead(t+s.eval, tail-tail%s.eval, t, advance); err != nil {
					return fmt.Errorf("slo %s: %w", s.slo.Name, err)
				}
			}
		}
		if r.opts.SkipBurn {
			continue
		}
		firing := r.targetFiring()
		switch {
		case burnTo == math.MaxInt64 && t > burnFrom && (anyTarget && r.allTargetsFired() || t >= burnFrom+deadline):
			burnTo = t
		case burnTo != math.MaxInt64 && !firing && resolvedAt < 0 && t >= burnTo+time.Hour:
			resolvedAt = t
		}
		if resolvedAt >= 0 && t >= resolvedAt+30*time.Minute {
			break
		}
		if burnTo != math.MaxInt64 && t >= burnTo+r.opts.Recovery {
			break
		}
	}
	t = min(t, end)
	if !recorded {
		if err := r.recordHistory(t+step, order); err != nil {
			return err
		}
	}
	r.end = t
	for _, s := range r.sims {
		for k, from := range s.open {
			r.alerts = append(r.alerts, s.interval(k, from, t))
		}
	}
	if !r.opts.SkipBurn {
		b := &Burn{Service: r.service, From: prom.Epoch().Add(burnFrom), To: prom.Epoch().Add(min(burnTo, t)), Rates: map[string]float64{}, Groups: map[string]string{}}
		for _, s := range r.sims {
			b.Rates[s.slo.Name] = s.rate
			if s.group != "" {
				b.Groups[s.slo.Name] = s.group
			}
		}
		r.burn = b
	}
	return nil
}

// targetFiring tells whether the alert some SLO's burn targets still fires.
func (r *serviceReplay) targetFiring() bool {
	for _, s := range r.sims {
		for k := range s.open {
			if k.AlertKey == (prom.AlertKey{Name: model.AlertBurn, Severity: s.severity}) && s.severity != "" {
				return true
			}
		}
	}
	return false
}

// allTargetsFired tells whether every SLO's targeted alert has fired during
// this burn.
func (r *serviceReplay) allTargetsFired() bool {
	for _, s := range r.sims {
		if s.severity == "" {
			continue
		}
		fired := false
		for k := range s.open {
			if k.AlertKey == (prom.AlertKey{Name: model.AlertBurn, Severity: s.severity}) {
				fired = true
			}
		}
		for _, a := range r.alerts {
			if a.SLO == s.slo.Name && a.Name == model.AlertBurn && a.Severity == s.severity && a.From.After(prom.Epoch().Add(r.opts.Healthy)) {
				fired = true
			}
		}
		if !fired {
			return false
		}
	}
	return true
}

// states are the states of s's alerts, one per alert and group, after an
// evaluation.
func (s *replaySim) states() map[groupAlert]rules.AlertState {
	st := map[groupAlert]rules.AlertState{}
	for g, states := range prom.GroupAlertStates(s.h, s.slo.GroupBy) {
		for k, v := range states {
			st[groupAlert{k, g}] = v
		}
	}
	return st
}

// evalAhead evaluates s from from to to as one span (prom's EvalSpan):
// advance(t) writes the scrapes and gauges up to t (those up to written
// are there already), the feeds are copied over the span, and the alert
// states after each step are kept for the lockstep loop to apply at that
// step (ahead). It is used only where the traffic does not depend on the
// alerts (the hour before the burn, the tail after it), so the span writes
// what evaluating step by step would; it does nothing unless every feed's
// recorder has been evaluated ahead up to to.
func (s *replaySim) evalAhead(from, to, written time.Duration, advance func(time.Duration) error) error {
	if to < from {
		return nil
	}
	for _, f := range s.feedsFull {
		if f.from.aheadTo < to {
			return nil
		}
	}
	s.ahead = map[time.Duration]map[groupAlert]rules.AlertState{}
	s.h.Groups = s.full
	copied := from - s.eval
	last, err := s.h.EvalSpan(from, to, func(upTo time.Duration) error {
		for t := written + s.eval; t <= upTo; t += s.eval {
			if err := advance(t); err != nil {
				return err
			}
		}
		for _, f := range s.feedsFull {
			if err := copyRange(f.from.h, s.h, f.selector, copied+s.eval, upTo+1, s.eval); err != nil {
				return fmt.Errorf("copy %s: %w", f.selector, err)
			}
		}
		written, copied = upTo, upTo
		return nil
	}, func(t time.Duration) bool {
		s.ahead[t] = s.states()
		return false
	})
	s.aheadTo = last
	return err
}

// apply opens and closes firing intervals, one per alert and group, from
// the states st after the evaluation at t.
func (s *replaySim) apply(st map[groupAlert]rules.AlertState, t time.Duration, r *serviceReplay) {
	for k, v := range st {
		if _, open := s.open[k]; v == rules.StateFiring && !open {
			s.open[k] = t
		}
	}
	for k, from := range s.open {
		if st[k] != rules.StateFiring {
			r.alerts = append(r.alerts, s.interval(k, from, t))
			delete(s.open, k)
		}
	}
}

func (s *replaySim) interval(k groupAlert, from, to time.Duration) AlertInterval {
	return AlertInterval{Name: k.Name, Severity: k.Severity, SLO: s.slo.Name, Service: s.slo.Service.Name, Group: k.group,
		From: prom.Epoch().Add(from), To: prom.Epoch().Add(to)}
}

// replayWorkloads is the series of one SLO's review replay: for a grouped
// SLO, three groups, the first of which burns (so the page shows one
// group's burn beside the others' health, each named); else one workload.
// A grouped SLO whose groups cannot be split replays as one.
func replayWorkloads(slo model.SLO, shape synth.Shape) (*synth.Workload, []synth.Group, error) {
	if len(slo.GroupBy) > 0 {
		if groups, err := synth.Grouped(slo, shape, 3); err == nil {
			return groups[0].Workload, groups, nil
		}
	}
	w, err := synth.New(slo, shape)
	return w, nil, err
}

// writeGauges appends the engine gauges at t: load follows traffic, and a
// burn shows as the queue and the KV cache filling up, the way an
// overloaded engine degrades.
func (s *replaySim) writeGauges(t time.Duration, load float64, burning bool) error {
	if len(s.gauges) == 0 {
		return nil
	}
	app := s.h.DB.Appender(context.Background())
	ms := prom.Epoch().Add(t).UnixMilli()
	pods := s.d.Workload.Pods
	for i, g := range s.gauges {
		share := workload.PodShare(g.pod, pods) * load
		var v float64
		switch g.kind {
		case "waiting":
			v = math.Round(math.Max(0, 4*(share-0.9)))
			if burning {
				v += math.Round(30 * workload.PodShare(g.pod, pods))
			}
		case "running":
			v = math.Round(20 * share)
			if burning {
				v = math.Max(v, 56)
			}
		case "kv":
			v = 0.25 + 0.3*share
			if burning {
				v = 0.9 + 0.02*float64(g.pod)
			}
			v = math.Min(v, 0.99)
		}
		ref, err := app.Append(s.refs[i], g.labels, ms, v)
		if err != nil {
			app.Rollback()
			return fmt.Errorf("append gauge sample: %w", err)
		}
		s.refs[i] = ref
	}
	if err := app.Commit(); err != nil {
		return fmt.Errorf("commit gauge samples: %w", err)
	}
	return nil
}
