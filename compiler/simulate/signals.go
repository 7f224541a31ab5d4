package simulate

import (
	"fmt"
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/inferslo/inferslo/compiler/keda"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

// outageKey is the outage tier's burn alert.
var outageKey = alertKey{model.AlertBurn, model.OutageTier}

// OutageDeadline is how soon the outage tier must page after every request
// starts failing.
const OutageDeadline = 3 * time.Minute

// outageSilent lists the outage tier's alert, when the SLO has one, among
// the alerts a partial burn must leave silent.
func (s *sloSim) outageSilent() []alertKey {
	if s.slo.Alerting.Outage == nil {
		return nil
	}
	return []alertKey{outageKey}
}

// outage: healthy history, then every request fails (or misses the
// threshold) until the outage tier fires, then healthy until it resolves.
// It must fire as its windows predict and within OutageDeadline.
func (s *sloSim) outage() ([]Check, error) {
	t := s.slo.Alerting.Outage
	if t == nil {
		return nil, nil
	}
	out, err := s.burnScenario(ScenarioOutage, *t, 1/s.budget(), true, nil)
	if err != nil || len(out) == 0 {
		return out, err
	}
	c := s.check(ScenarioOutage, outageKey.String(), fmt.Sprintf("pages within %s of a total outage", dur(OutageDeadline)), out[0].Observed, false)
	c.Delay = out[0].Delay
	c.Pass = out[0].Delay > 0 && out[0].Delay <= OutageDeadline
	return append(out, c), nil
}

// Ramp shape: rampBase of the minimum fleet's capacity, steady for
// rampSteady after the windows are warm, then an exponential climb to
// rampPeak of the maximum fleet's capacity, held for rampHold: past what
// maxReplicas serve, so the page must come. The load doubles every
// rampDoubling at most (the climb takes at least rampClimb), a pace
// replicas that take a minute to start can follow.
const (
	rampBase     = 0.3
	rampPeak     = 1.3
	rampSteady   = 10 * time.Minute
	rampClimb    = 20 * time.Minute
	rampDoubling = 4 * time.Minute
	rampHold     = 40 * time.Minute
)

// ramp: the SLO's fleet, sized from its capacity facts, under a load ramp
// past maxReplicas, with the generated ScaledObject's triggers driving the
// HPA. The queue-backlog warning must stay silent at steady load and fire
// before the first page; the run reports by how long, and when each KEDA
// trigger first asks for more replicas.
func (s *sloSim) ramp() ([]Check, error) {
	if s.slo.Alerting.Backlog == nil {
		return nil, nil
	}
	r, why, err := newRampRun(s.slo, rampHold)
	if err != nil {
		return nil, err
	}
	if why != "" {
		c := s.check(ScenarioRamp, irules.AlertBacklog, "fires before the page", "not replayed: "+why, true)
		c.NotProven = true
		return []Check{c}, nil
	}
	if s.planned != nil {
		*s.planned = max(*s.planned, r.end)
		return nil, nil
	}
	steps, err := runFleet(s.rules, FleetOptions{SLO: s.slo, Fleets: []Fleet{r.fleet}, End: r.end, Warmup: r.warm})
	if err != nil {
		return nil, &ruleError{err: err}
	}
	s.simulated += r.end
	return rampChecks(s, steps, r.scaler, r.start, r.from, r.to), nil
}

// rampRun is the fleet and schedule of an SLO's load ramp.
type rampRun struct {
	fleet                Fleet
	scaler               Autoscaler
	warm, start, end     time.Duration
	from, to, perReplica float64
}

// newRampRun sizes the SLO's fleet from its capacity facts and its load
// from its replica bounds, holding the peak for hold; why says what the
// ramp lacks when it cannot run.
func newRampRun(slo model.SLO, hold time.Duration) (r rampRun, why string, err error) {
	a := slo.Autoscaling
	if err := fleetReady(slo); err != nil {
		return r, err.Error(), nil
	}
	if a == nil || a.Capacity.MeanServiceTime <= 0 {
		return r, "the load ramp sizes replicas from autoscaling.capacity.meanServiceTime (and replicaConcurrency)", nil
	}
	objects, _, err := keda.Build(model.Set{SLOs: []model.SLO{slo}})
	if err != nil || len(objects) == 0 {
		return r, fmt.Sprintf("no ScaledObject to drive the fleet: %v", err), nil
	}
	objects.Sort()
	if r.scaler, err = ParseScaledObject(objects[0].Data); err != nil {
		return r, "", err
	}
	ls := map[string]string{}
	if sel := slo.Inference.Selector; sel != "" {
		ms, err := query.NewParser().ParseMetricSelector("{" + sel + "}")
		if err != nil {
			return r, "", fmt.Errorf("selector: %w", err)
		}
		if ls, err = satisfying(ms); err != nil {
			return r, err.Error(), nil
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
	r.perReplica = float64(slots) / service.Seconds()
	minimum := max(a.MinReplicas, 1)
	r.from, r.to = rampBase*float64(minimum)*r.perReplica, rampPeak*float64(a.MaxReplicas)*r.perReplica
	climb := max(rampClimb, time.Duration(math.Log2(r.to/r.from)*float64(rampDoubling)).Round(time.Minute))
	// The page tier's fastest pair starts with healthy history; slower
	// pairs average what exists, as in a fresh Prometheus.
	r.warm = roundUp(rampWarmup(slo), hpaSync)
	r.start = r.warm + rampSteady
	threshold := slo.Inference.Threshold.Float()
	// Prompts prefill in a fifth or two fifths of the threshold; 0.3 of
	// the budget's share take 1.6 thresholds whatever the load, so the SLO
	// holds with room until requests queue.
	slow := 0.3 * slo.ErrorBudget().Float()
	from, to, start := r.from, r.to, r.start
	r.fleet = Fleet{
		Labels: ls, AlertLabels: als, Autoscaler: r.scaler, Slots: slots, ServiceTime: service, Startup: time.Minute, Replicas: minimum,
		Prefill: []PrefillClass{{0.6, 0.2 * threshold}, {0.4 - slow, 0.4 * threshold}, {slow, 1.6 * threshold}},
		Load: func(t time.Duration) float64 {
			switch {
			case t <= start:
				return from
			case t >= start+climb:
				return to
			}
			return from * math.Pow(to/from, float64(t-start)/float64(climb))
		},
	}
	r.end = r.start + climb + hold
	return r, "", nil
}

// rampChecks reads a ramp's landmarks into checks; times count from the
// start of the climb.
func rampChecks(s *sloSim, steps []FleetStep, scaler Autoscaler, start time.Duration, from, to float64) []Check {
	at := func(st FleetStep) string {
		return fmt.Sprintf("+%s (%.0f requests/s, %d replicas)", dur(st.T-start), st.Load[0], st.Replicas[0])
	}
	page, warn, rise := -1, -1, -1
	earlyWarn := ""
	for i, st := range steps {
		if st.Backlog[0] && st.T <= start && earlyWarn == "" {
			earlyWarn = "fired at steady load, " + dur(start-st.T) + " before the ramp"
		}
		// The lead counts from the warning's last onset before the page:
		// one that fired and cleared earlier warned of something else.
		if page < 0 && st.Backlog[0] && st.T > start && (i == 0 || !steps[i-1].Backlog[0]) {
			warn = i
		}
		if page < 0 && st.Paging[0] {
			page = i
		}
		if rise < 0 && i > 0 && st.T > start && st.Replicas[0] > steps[i-1].Replicas[0] {
			rise = i
		}
	}
	var out []Check
	pageSubject := fmt.Sprintf("%s{severity=%q}", model.AlertBurn, "page")
	c := s.check(ScenarioRamp, pageSubject, fmt.Sprintf("pages once the load (%.0f to %.0f requests/s) outruns maxReplicas", from, to), "never paged", false)
	if page >= 0 {
		c.Observed, c.Pass = fmt.Sprintf("paged at %s, burn_tier %s", at(steps[page]), steps[page].PageTier[0]), true
	}
	out = append(out, c)
	if earlyWarn == "" {
		earlyWarn = "silent"
	}
	out = append(out, s.check(ScenarioRamp, irules.AlertBacklog, "silent at steady load", earlyWarn, earlyWarn == "silent"))
	c = s.check(ScenarioRamp, irules.AlertBacklog, "fires before the page", "never fired", false)
	switch {
	case warn >= 0 && page >= 0:
		c.Lead = steps[page].T - steps[warn].T
		c.Observed = fmt.Sprintf("fired at %s, %s before the page", at(steps[warn]), dur(c.Lead))
		c.Pass = c.Lead > 0
		if c.Lead <= 0 {
			c.Observed = fmt.Sprintf("fired at %s, not before the page at %s", at(steps[warn]), at(steps[page]))
		}
	case warn >= 0:
		c.Observed = "fired at " + at(steps[warn]) + "; no page to lead"
	}
	out = append(out, c)
	c = s.check(ScenarioRamp, "replicas", "rise before the page", "never rose", false)
	if rise >= 0 {
		c.Observed = fmt.Sprintf("rose at %s", at(steps[rise]))
		c.Pass = page < 0 || rise < page
	}
	out = append(out, c)
	n, flaps, where := reversals(steps, start, s.budget())
	c = s.check(ScenarioRamp, "replicas", "never scale in below what the load needs: no scale-in undone by a scale-out after the SLO broke", "no reversal", flaps == 0)
	switch {
	case flaps > 0:
		c.Observed = fmt.Sprintf("%d of %d reversals flapped, the first at %s", flaps, n, at(steps[where]))
	case n > 0:
		c.Observed = fmt.Sprintf("%d reversals, none below what the load needed (the first at %s)", n, at(steps[where]))
	}
	out = append(out, c)
	asks := map[string]Ask{}
	for _, a := range firstAsks(steps, scaler, start) {
		asks[a.Trigger] = a
	}
	for _, tr := range scaler.Triggers {
		obs := "never asked for more replicas"
		if a, ok := asks[tr.Name]; ok {
			st := steps[a.step]
			obs = fmt.Sprintf("would scale out at %s: %.3g against target %g asks for %d", at(st), a.Value, tr.Target, a.Replicas)
			if page >= 0 {
				if lead := steps[page].T - st.T; lead > 0 {
					obs += ", " + dur(lead) + " before the page"
				} else {
					obs += ", after the page"
				}
			}
		}
		out = append(out, s.check(ScenarioRamp, "KEDA trigger "+tr.Name, "reported: when it first asks for more replicas", obs, true))
	}
	return out
}

// reversals counts, from the start of the climb, the changes of direction
// of the replica count, and of them the flaps: a scale-in after which the
// share of slow requests passed the error budget before the next scale-out,
// so the fleet shrank below what the load needed and grew back; first is
// the step of the first flap (or of the first reversal when none flapped).
func reversals(steps []FleetStep, start time.Duration, budget float64) (n, flaps, first int) {
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
		if t.Severity == "page" || out > 0 {
			break
		}
	}
	return max(out, time.Hour)
}
