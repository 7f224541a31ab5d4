package autoscale

import (
	"fmt"
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/keda"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
)

// Ramp shape: rampBase of the minimum fleet's capacity, steady for
// rampSteady after the windows are warm, then an exponential climb to
// rampPeak of the maximum fleet's capacity, held for RampHold: past what
// maxReplicas serve, so the page must come. The load doubles every
// rampDoubling at most (the climb takes at least rampClimb), a pace
// replicas that take a minute to start can follow.
const (
	rampBase     = 0.3
	rampPeak     = 1.3
	rampSteady   = 10 * time.Minute
	rampClimb    = 20 * time.Minute
	rampDoubling = 4 * time.Minute
	RampHold     = 40 * time.Minute
)

// RampRun is the fleet and schedule of an SLO's load ramp.
type RampRun struct {
	Fleet                Fleet
	Scaler               Autoscaler
	Warm, Start, End     time.Duration
	From, To, PerReplica float64
}

// NewRampRun sizes the SLO's fleet from its capacity facts and its load
// from its replica bounds, holding the peak for hold; why says what the
// ramp lacks when it cannot run.
func NewRampRun(slo model.SLO, hold time.Duration) (r RampRun, why string, err error) {
	r.Fleet, r.PerReplica, why, err = fleetOf(slo)
	if err != nil || why != "" {
		return r, why, err
	}
	a := slo.Autoscaling
	r.Scaler = r.Fleet.Autoscaler
	r.From, r.To = rampBase*float64(r.Fleet.Replicas)*r.PerReplica, rampPeak*float64(a.MaxReplicas)*r.PerReplica
	climb := max(rampClimb, time.Duration(math.Log2(r.To/r.From)*float64(rampDoubling)).Round(time.Minute))
	// The page tier's fastest pair starts with healthy history; slower
	// pairs average what exists, as in a fresh Prometheus.
	r.Warm = predict.RoundUp(rampWarmup(slo), HPASync)
	r.Start = r.Warm + rampSteady
	from, to, start := r.From, r.To, r.Start
	r.Fleet.Load = func(t time.Duration) float64 {
		switch {
		case t <= start:
			return from
		case t >= start+climb:
			return to
		}
		return from * math.Pow(to/from, float64(t-start)/float64(climb))
	}
	r.End = r.Start + climb + hold
	return r, "", nil
}

// Startup is how long a replica the HPA adds takes to serve in the ramp
// and the replays.
const Startup = time.Minute

// fleetOf is the SLO's fleet from its capacity facts, driven by its
// generated ScaledObject (the first of a grouped SLO's, reading the first
// group), at minReplicas (at least one) and without load; perReplica is
// the requests per second a replica serves at full use.
func fleetOf(slo model.SLO) (f Fleet, perReplica float64, why string, err error) {
	a := slo.Autoscaling
	if err := Ready(slo); err != nil {
		return f, 0, err.Error(), nil
	}
	if a == nil || a.Capacity.MeanServiceTime <= 0 {
		return f, 0, "the load ramp sizes replicas from autoscaling.capacity.meanServiceTime (and replicaConcurrency)", nil
	}
	objects, err := keda.Build(model.Set{SLOs: []model.SLO{slo}})
	if err != nil || len(objects) == 0 {
		return f, 0, fmt.Sprintf("no ScaledObject to drive the fleet: %v", err), nil
	}
	objects.Sort()
	scaler, err := ParseScaledObject(objects[0].Data)
	if err != nil {
		return f, 0, "", err
	}
	ls := map[string]string{}
	if sel := slo.Inference.Selector; sel != "" {
		ms, err := query.NewParser().ParseMetricSelector("{" + sel + "}")
		if err != nil {
			return f, 0, "", fmt.Errorf("selector: %w", err)
		}
		if ls, err = synth.Satisfying(ms); err != nil {
			return f, 0, err.Error(), nil
		}
	}
	als := map[string]string{model.LabelSLO: slo.Name}
	if len(a.Groups) > 0 {
		for _, l := range a.Groups[0] {
			ls[l.Name] = l.Value
			als[l.Name] = l.Value
		}
	}
	slots := 1
	if c := a.Capacity.ReplicaConcurrency; !c.IsZero() {
		slots = int(c.Float())
	}
	service := a.Capacity.MeanServiceTime
	f = Fleet{
		Labels: ls, AlertLabels: als, Autoscaler: scaler, Slots: slots, ServiceTime: service, Startup: Startup, Replicas: max(a.MinReplicas, 1),
		Prefill: capacity.PrefillMix(slo.Inference.Threshold.Float(), slo.ErrorBudget().Float()),
	}
	return f, float64(slots) / service.Seconds(), "", nil
}

// Reversals counts, from the start of the climb, the changes of direction
// of the replica count, and of them the flaps: a scale-in after which the
// share of slow requests passed the error budget before the next scale-out,
// so the fleet shrank below what the load needed and grew back; first is
// the step of the first flap (or of the first reversal when none flapped).
func Reversals(steps []FleetStep, start time.Duration, budget float64) (n, flaps, first int) {
	dir, firstFlap, firstRev := 0, -1, -1
	broke := false // the SLO broke since the last scale-in
	for i := 1; i < len(steps); i++ {
		if steps[i].T <= start {
			continue
		}
		d := steps[i].Replicas[0] - steps[i-1].Replicas[0]
		if d == 0 {
			broke = broke || dir < 0 && steps[i].Share[0] > budget
			continue
		}
		now := 1
		if d < 0 {
			now = -1
		}
		if dir != 0 && now != dir {
			n++
			if firstRev < 0 {
				firstRev = i
			}
			if now > 0 && broke {
				flaps++
				if firstFlap < 0 {
					firstFlap = i
				}
			}
		}
		broke = now < 0 && steps[i].Share[0] > budget
		dir = now
	}
	if firstFlap >= 0 {
		return n, flaps, firstFlap
	}
	return n, flaps, firstRev
}

// rampWarmup is the shortest long window of the page tier (of the first
// tier without one): an hour for 30d.
func rampWarmup(slo model.SLO) time.Duration {
	out := time.Duration(0)
	for _, t := range slo.Alerting.Tiers {
		for _, p := range t.Windows {
			if out == 0 || p.Long < out {
				out = p.Long
			}
		}
		if t.Severity == model.PageTier || out > 0 {
			break
		}
	}
	return max(out, time.Hour)
}

// FirstAsks are each trigger's first ask for more replicas after start.
func FirstAsks(steps []FleetStep, scaler Autoscaler, start time.Duration) []Ask {
	var out []Ask
	for j, tr := range scaler.Triggers {
		for i := 1; i < len(steps); i++ {
			st, cur := steps[i], steps[i-1].Replicas[0]
			if v := st.Values[0][j]; st.T > start && !math.IsNaN(v) && Propose(tr, v, cur, st.Ready[0]) > cur {
				out = append(out, Ask{Trigger: tr.Name, T: st.T, Replicas: Propose(tr, v, cur, st.Ready[0]), Value: v, Step: i})
				break
			}
		}
	}
	return out
}

// Ask is when a KEDA trigger first asked for more replicas in a ramp.
type Ask struct {
	Trigger  string
	T        time.Duration
	Replicas int
	// Value is what the trigger read.
	Value float64
	// Step is the index of the step it asked at.
	Step int
}
