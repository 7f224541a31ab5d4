package simulate

import (
	"fmt"
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/autoscale"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/workload"

	"github.com/inferslo/inferslo/compiler/keda"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

// outageKey is the outage tier's burn alert.
var outageKey = prom.AlertKey{Name: model.AlertBurn, Severity: model.OutageTier}

// OutageDeadline is how soon the outage tier must page after every request
// starts failing.
const OutageDeadline = 3 * time.Minute

// outageSilent lists the outage tier's alert, when the SLO has one, among
// the alerts a partial burn must leave silent.
func (s *sloSim) outageSilent() []prom.AlertKey {
	if s.slo.Alerting.Outage == nil {
		return nil
	}
	return []prom.AlertKey{outageKey}
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
	bl := s.slo.Alerting.Backlog
	if bl == nil {
		return nil, nil
	}
	notProven := func(why string) ([]Check, error) {
		c := s.check(ScenarioRamp, irules.AlertBacklog, "fires before the page", "not replayed: "+why, true)
		c.NotProven = true
		return []Check{c}, nil
	}
	a := s.slo.Autoscaling
	if err := autoscale.Ready(s.slo); err != nil {
		return notProven(err.Error())
	}
	if a == nil || a.Capacity.MeanServiceTime <= 0 {
		return notProven("the load ramp sizes replicas from autoscaling.capacity.meanServiceTime (and replicaConcurrency)")
	}
	objects, _, err := keda.Build(model.Set{SLOs: []model.SLO{s.slo}})
	if err != nil || len(objects) == 0 {
		return notProven(fmt.Sprintf("no ScaledObject to drive the fleet: %v", err))
	}
	objects.Sort()
	scaler, err := autoscale.ParseScaledObject(objects[0].Data)
	if err != nil {
		return nil, err
	}
	ls := map[string]string{}
	if sel := s.slo.Inference.Selector; sel != "" {
		ms, err := query.NewParser().ParseMetricSelector("{" + sel + "}")
		if err != nil {
			return nil, fmt.Errorf("selector: %w", err)
		}
		if ls, err = workload.Satisfying(ms); err != nil {
			return notProven(err.Error())
		}
	}
	als := map[string]string{model.LabelSLO: s.slo.Name}
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
	perReplica := float64(slots) / service.Seconds()
	minimum := max(a.MinReplicas, 1)
	from, to := rampBase*float64(minimum)*perReplica, rampPeak*float64(a.MaxReplicas)*perReplica
	climb := max(rampClimb, time.Duration(math.Log2(to/from)*float64(rampDoubling)).Round(time.Minute))
	// The page tier's fastest pair starts with healthy history; slower
	// pairs average what exists, as in a fresh Prometheus.
	warm := predict.RoundUp(s.rampWarmup(), autoscale.HPASync)
	start := warm + rampSteady
	threshold := s.slo.Inference.Threshold.Float()
	// Prompts prefill in a fifth or two fifths of the threshold; 0.3 of
	// the budget's share take 1.6 thresholds whatever the load, so the SLO
	// holds with room until requests queue.
	slow := 0.3 * s.budget()
	fleet := autoscale.Fleet{
		Labels: ls, AlertLabels: als, Autoscaler: scaler, Slots: slots, ServiceTime: service, Startup: time.Minute, Replicas: minimum,
		Prefill: []autoscale.PrefillClass{{Share: 0.6, Seconds: 0.2 * threshold}, {Share: 0.4 - slow, Seconds: 0.4 * threshold}, {Share: slow, Seconds: 1.6 * threshold}},
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
	end := start + climb + rampHold
	if s.planned != nil {
		*s.planned = max(*s.planned, end)
		return nil, nil
	}
	steps, err := autoscale.RunIndexed(s.rules, autoscale.FleetOptions{SLO: s.slo, Fleets: []autoscale.Fleet{fleet}, End: end, Warmup: warm})
	if err != nil {
		return nil, &ruleError{err: err}
	}
	s.simulated += end
	return rampChecks(s, steps, scaler, start, from, to), nil
}

// rampChecks reads a ramp's landmarks into checks; times count from the
// start of the climb.
func rampChecks(s *sloSim, steps []autoscale.FleetStep, scaler autoscale.Autoscaler, start time.Duration, from, to float64) []Check {
	at := func(st autoscale.FleetStep) string {
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
	for j, tr := range scaler.Triggers {
		obs := "never asked for more replicas"
		for i := 1; i < len(steps); i++ {
			st, cur := steps[i], steps[i-1].Replicas[0]
			if v := st.Values[0][j]; st.T > start && !math.IsNaN(v) && autoscale.Propose(tr, v, cur) > cur {
				obs = fmt.Sprintf("would scale out at %s: %.3g against target %g asks for %d", at(st), v, tr.Target, autoscale.Propose(tr, v, cur))
				if page >= 0 {
					if lead := steps[page].T - st.T; lead > 0 {
						obs += ", " + dur(lead) + " before the page"
					} else {
						obs += ", after the page"
					}
				}
				break
			}
		}
		out = append(out, s.check(ScenarioRamp, "KEDA trigger "+tr.Name, "reported: when it first asks for more replicas", obs, true))
	}
	return out
}

// rampWarmup is the shortest long window of the page tier (of the first
// tier without one): an hour for 30d.
func (s *sloSim) rampWarmup() time.Duration {
	out := time.Duration(0)
	for _, t := range s.slo.Alerting.Tiers {
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
