package autoscale

import (
	"fmt"
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/keda"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// The trace replay measures what an autoscaler's replicas buy: an SLO's
// fleet under a load trace whose peak is the capacity plan's peakRPS,
// driven by the generated ScaledObject, by a queue-depth-only one and at a
// static size, each scored on the share of requests within the TTFT
// threshold and on replica-hours.

// Trace is a load shape: the share of the plan's peak load at t.
type Trace struct {
	Name  string
	End   time.Duration
	Share func(t time.Duration) float64
	// Phases name spans of the trace (low, ramp, peak, fall), in order,
	// each ending where the next starts.
	Phases []Phase
}

// Phase is a named span of a trace starting at Start.
type Phase struct {
	Name  string
	Start time.Duration
}

// Trace names.
const (
	TraceDiurnal = "diurnal day"
	TraceBurst   = "burst"
)

// DiurnalDay is a day compressed to dayLength: the load follows a cosine
// from a night at a fifth of the peak to the peak at mid-day and back.
// The climb takes half the day, twice as steep as a real day's.
func DiurnalDay() Trace {
	const night = 0.2
	return Trace{
		Name: TraceDiurnal, End: dayLength,
		Share: func(t time.Duration) float64 {
			return night + (1-night)*(1-math.Cos(2*math.Pi*float64(t)/float64(dayLength)))/2
		},
		Phases: []Phase{{"low", 0}, {"ramp", dayLength / 8}, {"peak", 3 * dayLength / 8}, {"fall", 5 * dayLength / 8}},
	}
}

// dayLength is the diurnal trace's day: short enough that a replay of
// every example stays cheap.
const dayLength = 6 * time.Hour

// Burst holds a third of the peak, climbs to the peak in five minutes (the
// load triples), holds it, falls back as fast and holds.
func Burst() Trace {
	const (
		base  = 0.33
		quiet = 20 * time.Minute
		climb = 5 * time.Minute
		hold  = 25 * time.Minute
	)
	return Trace{
		Name: TraceBurst, End: quiet + climb + hold + climb + 15*time.Minute,
		Share: func(t time.Duration) float64 {
			switch {
			case t < quiet:
				return base
			case t < quiet+climb:
				return base + (1-base)*float64(t-quiet)/float64(climb)
			case t < quiet+climb+hold:
				return 1
			case t < quiet+2*climb+hold:
				return 1 - (1-base)*float64(t-quiet-climb-hold)/float64(climb)
			}
			return base
		},
		Phases: []Phase{{"low", 0}, {"ramp", quiet}, {"peak", quiet + climb}, {"fall", quiet + climb + hold}},
	}
}

// Traces are the traces every autoscaled SLO is replayed on.
func Traces() []Trace { return []Trace{DiurnalDay(), Burst()} }

// replayWarmup is the history the triggers' windows read before the trace
// starts, at its first load.
const replayWarmup = 10 * time.Minute

// MaxAskFactor is how many times the plan's replicas at a load a scale-up
// may ask for.
const MaxAskFactor = 1.5

// Outcome is one fleet replayed on one trace.
type Outcome struct {
	// Attainment is the share of requests answered within the TTFT
	// threshold (a request whose client gave up waiting is not).
	Attainment float64
	// PeakAttainment is the attainment while the load is within 1% of
	// the peak.
	PeakAttainment float64
	// ReplicaHours counts every replica the HPA set, starting or serving.
	ReplicaHours float64
	Peak         int
	// Overshoots are the scale-ups past MaxAskFactor times the plan's
	// replicas at the highest load of the next Startup.
	Overshoots []Overshoot
	// Flaps are scale-ins the SLO broke after before the next scale-out.
	Flaps int
	Steps []FleetStep
}

// PhaseStep is the replay at the middle of a trace's phase.
type PhaseStep struct {
	Phase string
	Step  FleetStep
}

// AtPhases are the steps of an outcome at the middle of each of the
// trace's phases.
func (o Outcome) AtPhases(tr Trace) []PhaseStep {
	var out []PhaseStep
	for i, p := range tr.Phases {
		end := tr.End
		if i+1 < len(tr.Phases) {
			end = tr.Phases[i+1].Start
		}
		mid := replayWarmup + (p.Start+end)/2
		for _, st := range o.Steps {
			if st.T >= mid {
				out = append(out, PhaseStep{p.Name, st})
				break
			}
		}
	}
	return out
}

// Overshoot is one scale-up past what the load needs.
type Overshoot struct {
	T              time.Duration
	Load           float64
	Replicas, Need int
}

func (o Overshoot) String() string {
	return fmt.Sprintf("+%s: %d replicas at %.1f requests/s where the plan needs %d", o.T, o.Replicas, o.Load, o.Need)
}

// Replayer replays one SLO's fleet on traces.
type Replayer struct {
	SLO  model.SLO
	Plan capacity.Result
	// Fleet is the SLO's fleet under its generated ScaledObject.
	Fleet Fleet
	// Rules are the SLO's compiled rule groups (the triggers may read
	// recordings).
	Rules   prom.RuleIndex
	Scratch string
}

// NoCapacityFacts is why an autoscaled SLO without capacity facts is not
// replayed: a queue target or a latency share says nothing of how many
// requests a replica serves, so no trace can be sized without inventing it.
const NoCapacityFacts = "no capacity facts (autoscaling.capacity: peakRPS, meanServiceTime): nothing says how many requests a replica serves, so no load trace can be sized for its fleet; give them to replay it (its ScaledObject gets the load trigger too)"

// NewReplayer is the replayer of an autoscaled TTFT SLO with capacity
// facts; why says what it lacks when it cannot replay.
func NewReplayer(slo model.SLO, rules prom.RuleIndex, scratch string) (r Replayer, why string, err error) {
	if slo.Autoscaling == nil || slo.Autoscaling.Capacity.PeakRPS.IsZero() {
		return r, NoCapacityFacts, nil
	}
	f, _, why, err := fleetOf(slo)
	if err != nil || why != "" {
		return r, why, err
	}
	plan, err := capacity.Plan(slo)
	if err != nil {
		return r, err.Error(), nil
	}
	return Replayer{SLO: slo, Plan: plan, Fleet: f, Rules: rules, Scratch: scratch}, "", nil
}

// Need is the capacity plan's replica count at a load (requests/s).
func (r Replayer) Need(load float64) int {
	return r.Plan.Need(load)
}

// Peak is the trace's peak load, the plan's peakRPS.
func (r Replayer) Peak() float64 { return r.Plan.PeakRPS.Float() }

// Needed is the plan's replicas at the trace's peak.
func (r Replayer) Needed() int { return r.Need(r.Peak()) }

// load is the trace's requests per second at simulated time t (the trace
// starts after the warmup).
func (r Replayer) load(tr Trace) func(time.Duration) float64 {
	peak := r.Peak()
	return func(t time.Duration) float64 { return peak * tr.Share(max(0, t-replayWarmup)) }
}

// Replay runs the fleet under the autoscaler on the trace: the triggers'
// queries against an in-memory Prometheus, the HPA's loop on their values.
func (r Replayer) Replay(a Autoscaler, tr Trace) (Outcome, error) {
	f := r.Fleet
	f.Autoscaler, f.Load = a, r.load(tr)
	f.Replicas = min(max(r.Need(f.Load(0)), a.MinReplicas, 1), a.MaxReplicas)
	steps, err := RunIndexed(r.Rules, FleetOptions{SLO: r.SLO, Fleets: []Fleet{f}, End: replayWarmup + tr.End, Warmup: replayWarmup, TriggersOnly: true, Scratch: r.Scratch})
	if err != nil {
		return Outcome{}, err
	}
	return r.score(steps, f.Load, a.MinReplicas), nil
}

// Static runs the fleet at n replicas on the trace, without Prometheus.
func (r Replayer) Static(n int, tr Trace) Outcome {
	f := r.Fleet
	f.Load, f.Replicas = r.load(tr), n
	s := newFleetSim(f, r.SLO)
	var steps []FleetStep
	for t := time.Duration(0); t <= replayWarmup+tr.End; t += HPASync {
		s.advance(t)
		steps = append(steps, FleetStep{T: t, Replicas: []int{n}, Ready: []int{n}, Load: []float64{s.lambda}, Share: []float64{s.share}, Dropped: []float64{s.dropped}})
	}
	return r.score(steps, f.Load, n)
}

// SmallestStatic is the fewest static replicas that hold the SLO's
// objective through the trace's peak (up to three times the plan's; 0 if none):
// what the capacity plan sizes.
func (r Replayer) SmallestStatic(tr Trace) int {
	for n := 1; n <= 3*r.Needed()+2; n++ {
		if r.Static(n, tr).PeakAttainment >= r.SLO.Objective.Float() {
			return n
		}
	}
	return 0
}

// score reads an outcome from the steps after the warmup.
func (r Replayer) score(steps []FleetStep, load func(time.Duration) float64, minimum int) Outcome {
	var o Outcome
	var all, missed, peakAll, peakMissed float64
	budget := r.SLO.ErrorBudget().Float()
	for i, st := range steps {
		if st.T < replayWarmup {
			continue
		}
		n := st.Load[0] * HPASync.Seconds()
		all += n
		miss := min(n, n*st.Share[0]+st.Dropped[0])
		missed += miss
		if st.Load[0] >= 0.99*r.Peak() {
			peakAll, peakMissed = peakAll+n, peakMissed+miss
		}
		o.ReplicaHours += float64(st.Replicas[0]) * HPASync.Hours()
		o.Peak = max(o.Peak, st.Replicas[0])
		if i > 0 && st.Replicas[0] > steps[i-1].Replicas[0] {
			high := 0.0
			for d := time.Duration(0); d <= Startup; d += HPASync {
				high = max(high, load(st.T+d))
			}
			need := r.Need(high)
			if st.Replicas[0] > max(minimum, int(math.Ceil(MaxAskFactor*float64(need)))) {
				o.Overshoots = append(o.Overshoots, Overshoot{T: st.T - replayWarmup, Load: st.Load[0], Replicas: st.Replicas[0], Need: need})
			}
		}
	}
	o.Attainment = 1
	if all > 0 {
		o.Attainment = 1 - missed/all
	}
	o.PeakAttainment = 1
	if peakAll > 0 {
		o.PeakAttainment = 1 - peakMissed/peakAll
	}
	_, o.Flaps, _ = Reversals(steps, replayWarmup, budget)
	o.Steps = steps
	return o
}

// QueueOnly is KEDA's usual vLLM recipe for the SLO's fleet: one trigger on
// the engine's summed waiting requests against a per-replica target
// (AverageValue: the spec's queuePerReplica, else the plan's), the HPA's
// default behavior, no fallback; false when the engine exports no queue
// gauge.
func (r Replayer) QueueOnly() (Autoscaler, bool, error) {
	a := r.SLO.Autoscaling
	var g model.ScaleGroup
	if len(a.Groups) > 0 {
		g = a.Groups[0]
	}
	sel, err := keda.QueueSelector(r.SLO, g)
	if err != nil || sel == "" {
		return Autoscaler{}, false, err
	}
	target := a.QueuePerReplica
	if target.IsZero() {
		target = r.Plan.QueuePerReplica
	}
	return Autoscaler{
		Name: r.Fleet.Autoscaler.Name + "-queue-only", MinReplicas: a.MinReplicas, MaxReplicas: a.MaxReplicas,
		ScaleDownWindow: DefaultScaleDownWindow,
		Triggers:        []Trigger{{Name: "queue", Query: "sum(" + sel + ")", Average: true, Target: target.Float()}},
	}, true, nil
}
