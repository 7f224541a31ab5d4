package autoscale

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/inferslo/inferslo/compiler/query"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
)

// The fleet simulation puts the autoscaler in the loop: requests arrive at a
// rate against replicas × slots, queueing (Erlang C, as the capacity plan
// queues) and so TTFT and queue depth follow from the load, the engine's
// series are scraped into Prometheus with the generated rules evaluating
// over them, the generated triggers are queried as KEDA does and the HPA's
// algorithm turns them into replicas, which feed back into the queueing.
// Everything is deterministic: expected values, not samples.

// Routing is how requests reach the replicas.
type Routing int

const (
	// Pooled is one queue before every slot of the fleet, as a gateway
	// sending each request to a free slot does: a replica that starts
	// takes from the backlog at once.
	Pooled Routing = iota
	// Random sends each request to a serving replica regardless of its
	// queue, as a Kubernetes Service does: each replica queues its share
	// on its own, one that starts gets new requests only and one removed
	// drains what it holds.
	Random
)

// Fleet is one scale target's engine under load.
type Fleet struct {
	// Labels the engine's series carry (model_name="...").
	Labels map[string]string
	// AlertLabels pick the fleet's alerts (slo="...", the group's labels);
	// nil: Labels.
	AlertLabels map[string]string
	Autoscaler  Autoscaler
	// Slots are the requests one replica serves at once, each for
	// ServiceTime on average.
	Slots       int
	ServiceTime time.Duration
	// Prefill is the requests' TTFT without queueing, what more
	// replicas cannot move.
	Prefill []capacity.PrefillClass
	Routing Routing
	// Startup is how long an added replica takes to serve.
	Startup time.Duration
	// Replicas at the start.
	Replicas int
	// Load is the arrival rate, requests per second, at t.
	Load func(t time.Duration) float64
	// VanishAt, when positive, renames the series from then on (a metric
	// or label an upgrade renamed): the triggers find nothing.
	VanishAt time.Duration
}

// FleetOptions is one simulation of fleets sharing a Prometheus.
type FleetOptions struct {
	// SLO is the TTFT SLO whose histogram, buckets and queue gauge the
	// engines export (a grouped SLO covers every fleet).
	SLO model.SLO
	// Rules are the compiled rule files the alerts come from.
	Rules  artifact.Set
	Fleets []Fleet
	// End of the simulation; the HPA starts acting after Warmup, which
	// gives the alerts' windows a history.
	End, Warmup time.Duration
	// TriggersOnly evaluates only the recording rules the triggers read,
	// and no alert: the steps report no paging or backlog warning.
	TriggersOnly bool
	// Scratch is the folder the replays keep their storage in, one
	// folder each, removed as they end; "" is the system's temporary
	// folder.
	Scratch string
}

// FleetStep is the state of every fleet at one HPA sync.
type FleetStep struct {
	T time.Duration
	// Per fleet: the replica count the HPA set, the ones serving, the
	// arrival rate, the true share of requests over the threshold, each
	// trigger's value (NaN when the query found nothing) and whether the
	// fleet's page alert fires.
	Replicas, Ready []int
	Load, Share     []float64
	Values          [][]float64
	Paging          []bool
	// Per fleet: the burn_tier of a firing page alert ("" when none
	// fires; the outage tier before the others), and whether the
	// queue-backlog warning fires.
	PageTier []string
	Backlog  []bool
	// Per fleet: the replicas the triggers ask for at this sync, the
	// largest of their asks within min and max, before stabilization and
	// rate policies (the current count before the HPA acts).
	Desired []int
	// Per fleet: waiting requests per serving replica, the objective's
	// TTFT quantile (seconds) of the requests of the last scrape, and the
	// requests of the scrape whose clients gave up waiting.
	Queue, TTFT, Dropped []float64
}

// HPASync is the HPA's sync period, and the scrape interval.
const HPASync = 15 * time.Second

// clientPatience is how long a queued request waits before its client
// gives up, which bounds the backlog.
const clientPatience = time.Minute

// Ready tells why an SLO cannot drive the fleet simulation, if so.
func Ready(slo model.SLO) error {
	inf := slo.Inference
	if inf == nil || inf.Role != "ttft" || len(inf.Buckets) == 0 || inf.Native {
		return fmt.Errorf("slo %s: the fleet simulation needs a TTFT SLO over a classic histogram with known buckets", slo.Name)
	}
	return nil
}

// RunIndexed simulates the fleets' autoscalers against load-driven
// latency over parsed rule groups.
func RunIndexed(x prom.RuleIndex, opts FleetOptions) ([]FleetStep, error) {
	h, err := prom.NewIndexedHarness(x, false, opts.Scratch)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	// Only what the steps read is evaluated and written: the recordings
	// the triggers read and, unless TriggersOnly, the page and backlog
	// alerts with the recordings they read.
	var triggers []parser.Expr
	p := query.NewParser()
	restrict := true
	for _, f := range opts.Fleets {
		for _, tr := range f.Autoscaler.Triggers {
			e, err := p.ParseExpr(tr.Query)
			if err != nil && opts.TriggersOnly {
				return nil, fmt.Errorf("query %s: %w", tr.Query, err)
			}
			if err != nil {
				// The trigger's query reports it.
				restrict = false
				continue
			}
			triggers = append(triggers, e)
		}
	}
	if restrict {
		var alerts func(*rules.AlertingRule) bool
		if !opts.TriggersOnly {
			alerts = func(ar *rules.AlertingRule) bool { return pages(ar) || ar.Name() == irules.AlertBacklog }
		}
		h.RestrictTo(triggers, alerts)
	}
	reads := h.Reads(triggers...)
	sims := make([]*fleetSim, len(opts.Fleets))
	for i, f := range opts.Fleets {
		sims[i] = newFleetSim(f, opts.SLO)
		sims[i].reads = reads
	}
	eval := opts.SLO.Evaluation
	if eval <= 0 {
		eval = 30 * time.Second
	}
	var steps []FleetStep
	for t := time.Duration(0); t <= opts.End; t += HPASync {
		app := h.DB.Appender(context.Background())
		for _, s := range sims {
			if err := s.scrape(app, t); err != nil {
				app.Rollback()
				return nil, err
			}
		}
		if err := app.Commit(); err != nil {
			return nil, fmt.Errorf("commit synthetic samples: %w", err)
		}
		if t%eval == 0 {
			if err := h.Eval(t); err != nil {
				return nil, err
			}
		}
		step := FleetStep{T: t}
		for _, s := range sims {
			values := make([]float64, len(s.f.Autoscaler.Triggers))
			for j, tr := range s.f.Autoscaler.Triggers {
				// Before the HPA acts only the rules' history matters.
				if t < opts.Warmup-HPASync {
					values[j] = math.NaN()
					continue
				}
				vec, err := h.Query(tr.Query, t)
				if err != nil {
					return nil, fmt.Errorf("trigger %s: %w", tr.Name, err)
				}
				switch len(vec) {
				case 0:
					values[j] = math.NaN()
				case 1:
					// KEDA hands the HPA whole thousandths (truncated).
					values[j] = math.Trunc(vec[0].F*1000) / 1000
				default:
					return nil, fmt.Errorf("trigger %s returned %d series; KEDA fails on more than one", tr.Name, len(vec))
				}
			}
			desired := s.replicas
			if t >= opts.Warmup {
				desired = s.sync(t, values)
			}
			step.Desired = append(step.Desired, desired)
			step.Replicas = append(step.Replicas, s.replicas)
			step.Ready = append(step.Ready, s.ready(t))
			step.Load = append(step.Load, s.lambda)
			step.Share = append(step.Share, s.share)
			step.Values = append(step.Values, values)
			als := s.f.AlertLabels
			if als == nil {
				als = s.f.Labels
			}
			tier := pageTier(h, als)
			step.Paging = append(step.Paging, tier != "")
			step.PageTier = append(step.PageTier, tier)
			step.Backlog = append(step.Backlog, prom.Firing(h, irules.AlertBacklog, als))
			step.Queue = append(step.Queue, s.queueDepth)
			step.TTFT = append(step.TTFT, s.quantile)
			step.Dropped = append(step.Dropped, s.dropped)
		}
		steps = append(steps, step)
	}
	return steps, nil
}

// pageTier is the burn_tier of a page alert firing for the fleet's labels
// (the outage tier first), or "" when none fires.
func pageTier(h *prom.Harness, ls map[string]string) string {
	out := ""
	for _, g := range h.Groups {
		for _, r := range g.Rules() {
			ar, ok := r.(*rules.AlertingRule)
			if !ok || !pages(ar) {
				continue
			}
			tier := ar.Labels().Get(model.LabelBurnTier)
			for _, a := range ar.ActiveAlerts() {
				if a.State == rules.StateFiring && prom.Matches(a.Labels, ls) && (out == "" || tier == model.OutageTier) {
					out = tier
					out = cmp.Or(out, model.PageTier)
				}
			}
		}
	}
	return out
}

// pages tells whether ar is a page alert: of the page or outage tier, or
// of page severity.
func pages(ar *rules.AlertingRule) bool {
	tier := ar.Labels().Get(model.LabelBurnTier)
	return tier == model.PageTier || tier == model.OutageTier || ar.Labels().Get(model.LabelSeverity) == model.PageTier
}

// fleetSim is one fleet's engine and HPA state.
type fleetSim struct {
	f     Fleet
	hist  string
	queue string
	// bounds are the buckets' upper bounds, +Inf last, and les the same
	// as le label values.
	bounds []float64
	les    []string
	// unit is how many of the histogram's unit make a second; threshold
	// is the SLO's bucket bound in that unit.
	unit, threshold float64
	// cumulative histogram counts per bucket (and +Inf last).
	cum []float64
	// backlogs are the requests beyond steady queueing each queue holds:
	// the fleet's one when pooled, else each serving replica's, the
	// oldest first.
	backlogs []float64
	// objective is the SLO's target; quantile and queueDepth what
	// FleetStep reports of the last scrape.
	objective, quantile, queueDepth float64
	lambda                          float64
	share                           float64
	// dropped are the requests of the last scrape whose clients gave up.
	dropped float64
	// replicas is the HPA's count; pending are the start times of
	// replicas not serving yet.
	replicas int
	pending  []time.Duration
	failures []int
	history  []recommendation
	// events are the scale changes (replicas: the change) the rate
	// policies count over their periods.
	events []recommendation
	series map[seriesKey]*fleetSeries
	// reads tells whether a query reads a series (nil: write them all).
	reads func(labels.Labels) bool
	// pods is how many pods' queue gauges were ever written: those of
	// replicas that stopped are marked stale.
	pods int
}

// seriesKey names a series a fleet writes: its metric, its own label
// (le, pod) if any, and whether the fleet's labels are renamed.
type seriesKey struct {
	name, label, value string
	renamed            bool
}

// fleetSeries is a series a fleet writes, and whether a query reads it.
type fleetSeries struct {
	lset labels.Labels
	ref  storage.SeriesRef
	read bool
}

type recommendation struct {
	t        time.Duration
	replicas int
}

func newFleetSim(f Fleet, slo model.SLO) *fleetSim {
	inf := slo.Inference
	s := &fleetSim{f: f, hist: inf.Histogram, queue: inf.Signals.QueueDepth, bounds: slices.Concat(inf.Buckets, []float64{math.Inf(1)}),
		replicas: f.Replicas, failures: make([]int, len(f.Autoscaler.Triggers)), series: map[seriesKey]*fleetSeries{},
		unit: float64(model.UnitsPerSecond(inf.Unit)), threshold: inf.NativeThreshold().Float(), objective: slo.Objective.Float()}
	for _, b := range s.bounds {
		s.les = append(s.les, labels.FormatOpenMetricsFloat(b))
	}
	s.cum = make([]float64, len(s.les))
	return s
}

// ready counts the replicas serving at t.
func (s *fleetSim) ready(t time.Duration) int {
	n := s.replicas - len(s.pending)
	for _, start := range s.pending {
		if t >= start+s.f.Startup {
			n++
		}
	}
	return n
}

// advance moves the engine on by one scrape interval ending at t and
// returns the mean number of requests waiting in steady queueing (without
// the backlog) of each queue.
func (s *fleetSim) advance(t time.Duration) float64 {
	dt := HPASync.Seconds()
	s.lambda = s.f.Load(t)
	queues, slots := s.queues(t)
	for len(s.backlogs) < queues {
		s.backlogs = append(s.backlogs, 0)
	}
	s.backlogs = s.backlogs[:queues]
	n := s.lambda * dt
	before := slices.Clone(s.cum)
	defer func() {
		s.quantile = scrapeQuantile(s.objective, s.bounds, before, s.cum) / s.unit
		if s.lambda == 0 {
			s.share = 0
		}
	}()
	if queues == 0 {
		// Nothing serves: every request's client gives up, past every
		// finite bucket.
		s.cum[len(s.cum)-1] += n
		s.share, s.dropped, s.queueDepth = 1, n, 0
		return 0
	}
	// Each queue is offered an equal share of the arrivals (random routing
	// gives it in expectation).
	lambda := s.lambda / float64(queues)
	mu := float64(slots) / s.f.ServiceTime.Seconds() // requests/s a queue's slots complete
	s.dropped = 0
	total := 0.0
	for i, b := range s.backlogs {
		// Backlog beyond what steady queueing holds: arrivals past
		// capacity, up to what clients wait for (a minute) before they
		// give up.
		raw := math.Max(0, b+(lambda-mu)*dt)
		s.backlogs[i] = min(raw, mu*clientPatience.Seconds())
		s.dropped += raw - s.backlogs[i]
		total += s.backlogs[i]
	}
	// A request waits with probability C(c, a), then an exponential time
	// of rate cμ − λ, after the backlog ahead of it.
	rho := math.Min(lambda/mu, 0.999)
	pWait := capacity.Queue{Servers: slots, Load: rho * float64(slots)}.ErlangC()
	if lambda == 0 {
		pWait = 0
	}
	lq := pWait * rho / (1 - rho)
	theta := mu * (1 - rho)
	for i, le := range s.bounds {
		under := 0.0
		// Queues holding the same backlog (all but those of replicas
		// that started since the last one drained) are one term.
		for j := 0; j < queues; {
			k := j + 1
			for k < queues && s.backlogs[k] == s.backlogs[j] {
				k++
			}
			for _, c := range s.f.Prefill {
				under += float64(k-j) / float64(queues) * c.Share * waitAtMost(le/s.unit-c.Seconds-s.backlogs[j]/mu, pWait, theta)
			}
			j = k
		}
		s.cum[i] += n * under
		if math.Abs(le-s.threshold) <= 1e-9*s.threshold {
			s.share = 1 - under
		}
	}
	s.queueDepth = (total + float64(queues)*lq) / float64(s.ready(t))
	return lq
}

// queues are the fleet's queues at t and the slots behind each: one
// before every serving slot when pooled, else one per serving replica.
func (s *fleetSim) queues(t time.Duration) (n, slots int) {
	ready := s.ready(t)
	if s.f.Routing == Pooled {
		return min(ready, 1), ready * s.f.Slots
	}
	return ready, s.f.Slots
}

// scrape advances the engine by one scrape interval ending at t and
// appends its series.
func (s *fleetSim) scrape(app storage.Appender, t time.Duration) error {
	lq := s.advance(t)

	renamed := s.f.VanishAt > 0 && t >= s.f.VanishAt
	ms := prom.Epoch().Add(t).UnixMilli()
	add := func(name string, v float64, label, value string) error {
		k := seriesKey{name, label, value, renamed}
		x := s.series[k]
		if x == nil {
			b := labels.NewBuilder(labels.EmptyLabels())
			b.Set(query.MetricNameLabel, name)
			for k, v := range s.f.Labels {
				if renamed {
					v += "-renamed"
				}
				b.Set(k, v)
			}
			if label != "" {
				b.Set(label, value)
			}
			x = &fleetSeries{lset: b.Labels()}
			x.read = s.reads == nil || s.reads(x.lset)
			s.series[k] = x
		}
		if !x.read {
			return nil
		}
		ref, err := app.Append(x.ref, x.lset, ms, v)
		if err != nil {
			return fmt.Errorf("append synthetic sample: %w", err)
		}
		x.ref = ref
		return nil
	}
	for i, le := range s.les {
		if err := add(s.hist+"_bucket", s.cum[i], "le", le); err != nil {
			return err
		}
	}
	if err := add(s.hist+"_count", s.cum[len(s.cum)-1], "", ""); err != nil {
		return err
	}
	if s.queue == "" {
		return nil
	}
	// Each serving replica exports its share of the queue, as engines
	// export their own; a stopped replica's series goes stale.
	ready := s.ready(t)
	for i := 0; i < max(ready, s.pods); i++ {
		v := math.Float64frombits(value.StaleNaN)
		if i < ready && s.f.Routing == Pooled {
			v = (s.backlogs[0] + lq) / float64(ready)
		} else if i < ready {
			v = s.backlogs[i] + lq
		}
		if err := add(s.queue, v, "pod", fmt.Sprintf("replica-%d", i)); err != nil {
			return err
		}
	}
	s.pods = max(s.pods, ready)
	return nil
}

// waitAtMost is P(W ≤ x) for a wait that is 0 with probability 1 − p and
// else exponential of rate theta.
func waitAtMost(x, p, theta float64) float64 {
	if x < 0 {
		return 0
	}
	return 1 - p*math.Exp(-theta*x)
}

// scaleTo sets the replica count: added replicas start, removed ones stop
// at once (the newest first).
func (s *fleetSim) scaleTo(t time.Duration, n int) {
	for ; s.replicas < n; s.replicas++ {
		s.pending = append(s.pending, t)
	}
	for ; s.replicas > n; s.replicas-- {
		if len(s.pending) > 0 {
			s.pending = s.pending[:len(s.pending)-1]
		}
	}
	// Replicas that have started stop being pending.
	kept := s.pending[:0]
	for _, start := range s.pending {
		if t < start+s.f.Startup {
			kept = append(kept, start)
		}
	}
	s.pending = kept
}
