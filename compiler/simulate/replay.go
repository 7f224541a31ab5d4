package simulate

import (
	"fmt"
	"math"

	"github.com/inferslo/inferslo/compiler/simulate/autoscale"
)

// ScenarioReplay replays an autoscaled SLO's fleet on load traces.
const ScenarioReplay = "trace replay"

// Autoscaling is one autoscaled SLO's fleet replayed on one trace under its
// generated ScaledObject, beside the baselines on the same trace.
type Autoscaling struct {
	SLO      string `json:"slo"`
	Scenario string `json:"scenario"`
	// Attainment is the share of requests within the TTFT threshold.
	Attainment   float64 `json:"attainment"`
	ReplicaHours float64 `json:"replicaHours"`
	PeakReplicas int     `json:"peakReplicas"`
	// NeededReplicas is the capacity plan's at the trace's peak;
	// SmallestStatic the fewest static replicas holding the SLO there.
	NeededReplicas int       `json:"neededReplicas"`
	SmallestStatic int       `json:"smallestStatic"`
	Baselines      Baselines `json:"baselines"`
	// Phases are the replay at the middle of each phase of the trace.
	Phases []Phase `json:"phases"`
}

// Phase is the fleet at the middle of a phase of a trace: the load
// (requests/s), the replicas set and serving, the waiting requests per
// serving replica, and the replicas the triggers ask for there (the
// largest ask, within min and max, before the HPA's stabilization and
// rate policies).
type Phase struct {
	Phase    string  `json:"phase"`
	Load     float64 `json:"load"`
	Replicas int     `json:"replicas"`
	Ready    int     `json:"ready"`
	Queue    float64 `json:"queue"`
	Desired  int     `json:"desired"`
}

// Baselines are the same fleet under KEDA's usual queue-depth-only
// ScaledObject (absent when the engine exports no queue gauge) and at the
// plan's peak size throughout.
type Baselines struct {
	QueueOnly  *Score `json:"queueOnly,omitempty"`
	StaticPeak Score  `json:"staticPeak"`
}

// Score is what a fleet bought with its replicas.
type Score struct {
	Attainment   float64 `json:"attainment"`
	ReplicaHours float64 `json:"replicaHours"`
}

// holds tells whether a score meets an objective.
func (s Score) holds(objective float64) bool { return s.Attainment >= objective }

// traceReplay replays the SLO's fleet on the diurnal and burst traces, with
// the generated ScaledObject and the baselines. Each trace must hold the
// SLO, never ask for more than autoscale.MaxAskFactor times the plan's
// replicas at the load, never flap, and cost fewer replica-hours than a
// baseline that also holds the SLO (else attain more than it).
func (s *sloSim) traceReplay() ([]Check, error) {
	inf := s.slo.Inference
	if s.slo.Autoscaling == nil || inf == nil || inf.Role != "ttft" || s.planned != nil {
		return nil, nil
	}
	r, why, err := autoscale.NewReplayer(s.slo, s.rules, s.opts.Scratch)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return []Check{s.check(ScenarioReplay, "replicas", "reported: the fleet on a day and a burst trace", "not replayed: "+why, true)}, nil
	}
	objective := s.slo.Objective.Float()
	var out []Check
	for _, tr := range autoscale.Traces() {
		o, err := r.Replay(r.Fleet.Autoscaler, tr)
		if err != nil {
			return nil, &ruleError{err: err}
		}
		a := Autoscaling{SLO: s.slo.Name, Scenario: tr.Name, Attainment: round6(o.Attainment), ReplicaHours: round2(o.ReplicaHours),
			PeakReplicas: o.Peak, NeededReplicas: r.Needed(), SmallestStatic: r.SmallestStatic(tr)}
		static := r.Static(a.NeededReplicas, tr)
		a.Baselines.StaticPeak = Score{round6(static.Attainment), round2(static.ReplicaHours)}
		q, ok, err := r.QueueOnly()
		if err != nil {
			return nil, err
		}
		if ok {
			qo, err := r.Replay(q, tr)
			if err != nil {
				return nil, &ruleError{err: err}
			}
			a.Baselines.QueueOnly = &Score{round6(qo.Attainment), round2(qo.ReplicaHours)}
		}
		for _, p := range o.AtPhases(tr) {
			st := p.Step
			a.Phases = append(a.Phases, Phase{Phase: p.Phase, Load: round2(st.Load[0]), Replicas: st.Replicas[0], Ready: st.Ready[0], Queue: round6(st.Queue[0]), Desired: st.Desired[0]})
		}
		s.replays = append(s.replays, a)
		s.simulated += tr.End
		subject := "replicas on the " + tr.Name
		out = append(out,
			s.check(ScenarioReplay, subject, fmt.Sprintf("hold the objective %s", s.slo.Objective.Percent()),
				fmt.Sprintf("%s of requests within %ss, %d to %d replicas (%.1f replica-hours)", pct(o.Attainment), inf.Threshold, minReplicas(o), o.Peak, o.ReplicaHours), o.Attainment >= objective))
		c := s.check(ScenarioReplay, subject, fmt.Sprintf("ask for at most %g times the plan's replicas at the load", autoscale.MaxAskFactor), "never did", len(o.Overshoots) == 0)
		if len(o.Overshoots) > 0 {
			c.Observed = fmt.Sprintf("%d scale-ups past it, the first at %s", len(o.Overshoots), o.Overshoots[0])
		}
		out = append(out, c, s.check(ScenarioReplay, subject, "no scale-in undone by a scale-out after the SLO broke", fmt.Sprintf("%d flaps", o.Flaps), o.Flaps == 0))
		out = append(out, s.beats(subject, a, objective))
		out = append(out, s.check(ScenarioReplay, subject, "reported: the plan's replicas against the fewest static ones that hold the SLO at the peak",
			fmt.Sprintf("plan %d, fewest static %d", a.NeededReplicas, a.SmallestStatic), true))
	}
	return out, nil
}

// beats is the check that the autoscaler is worth its replicas: fewer
// replica-hours than each baseline that holds the SLO, more attainment than
// each that does not.
func (s *sloSim) beats(subject string, a Autoscaling, objective float64) Check {
	own := Score{a.Attainment, a.ReplicaHours}
	type named struct {
		name  string
		score Score
	}
	bs := []named{{"static peak sizing", a.Baselines.StaticPeak}}
	if q := a.Baselines.QueueOnly; q != nil {
		bs = append(bs, named{"queue depth only", *q})
	}
	pass, obs := true, ""
	for _, b := range bs {
		if obs != "" {
			obs += "; "
		}
		if b.score.holds(objective) {
			pass = pass && own.ReplicaHours < b.score.ReplicaHours
			obs += fmt.Sprintf("%s holds it with %.1f replica-hours against %.1f", b.name, b.score.ReplicaHours, own.ReplicaHours)
			continue
		}
		pass = pass && own.Attainment > b.score.Attainment
		obs += fmt.Sprintf("%s attains %s against %s", b.name, pct(b.score.Attainment), pct(own.Attainment))
	}
	return s.check(ScenarioReplay, subject, "fewer replica-hours than a baseline holding the SLO, more attainment than one that does not", obs, pass)
}

// minReplicas is the fewest replicas an outcome ran after its warmup.
func minReplicas(o autoscale.Outcome) int {
	n := math.MaxInt
	for _, st := range o.Steps {
		n = min(n, st.Replicas[0])
	}
	return n
}

func pct(f float64) string { return fmt.Sprintf("%.3f%%", 100*f) }

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }
func round2(f float64) float64 { return math.Round(f*100) / 100 }
