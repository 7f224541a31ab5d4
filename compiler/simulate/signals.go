package simulate

import (
	"cmp"
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/simulate/autoscale"
	"github.com/inferslo/inferslo/compiler/simulate/prom"

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

// ramp: the SLO's fleet, sized from its capacity facts, under a load ramp
// past maxReplicas, with the generated ScaledObject's triggers driving the
// HPA. The queue-backlog warning must stay silent at steady load and fire
// before the first page; the run reports by how long, and when each KEDA
// trigger first asks for more replicas.
func (s *sloSim) ramp() ([]Check, error) {
	if s.slo.Alerting.Backlog == nil {
		return nil, nil
	}
	r, why, err := autoscale.NewRampRun(s.slo, autoscale.RampHold)
	if err != nil {
		return nil, err
	}
	if why != "" {
		c := s.check(ScenarioRamp, irules.AlertBacklog, "fires before the page", "not replayed: "+why, true)
		c.NotProven = true
		return []Check{c}, nil
	}
	if s.planned != nil {
		*s.planned = max(*s.planned, r.End)
		return nil, nil
	}
	steps, err := autoscale.RunIndexed(s.rules, autoscale.FleetOptions{SLO: s.slo, Fleets: []autoscale.Fleet{r.Fleet}, End: r.End, Warmup: r.Warm})
	if err != nil {
		return nil, &ruleError{err: err}
	}
	s.simulated += r.End
	return rampChecks(s, steps, r.Scaler, r.Start, r.From, r.To), nil
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
	pageSubject := fmt.Sprintf("%s{severity=%q}", model.AlertBurn, model.PageTier)
	c := s.check(ScenarioRamp, pageSubject, fmt.Sprintf("pages once the load (%.0f to %.0f requests/s) outruns maxReplicas", from, to), "never paged", false)
	if page >= 0 {
		c.Observed, c.Pass = fmt.Sprintf("paged at %s, burn_tier %s", at(steps[page]), steps[page].PageTier[0]), true
	}
	out = append(out, c)
	earlyWarn = cmp.Or(earlyWarn, "silent")
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
	n, flaps, where := autoscale.Reversals(steps, start, s.budget())
	c = s.check(ScenarioRamp, "replicas", "never scale in below what the load needs: no scale-in undone by a scale-out after the SLO broke", "no reversal", flaps == 0)
	switch {
	case flaps > 0:
		c.Observed = fmt.Sprintf("%d of %d autoscale.Reversals flapped, the first at %s", flaps, n, at(steps[where]))
	case n > 0:
		c.Observed = fmt.Sprintf("%d autoscale.Reversals, none below what the load needed (the first at %s)", n, at(steps[where]))
	}
	out = append(out, c)
	asks := map[string]autoscale.Ask{}
	for _, a := range autoscale.FirstAsks(steps, scaler, start) {
		asks[a.Trigger] = a
	}
	for _, tr := range scaler.Triggers {
		obs := "never asked for more replicas"
		if a, ok := asks[tr.Name]; ok {
			st := steps[a.Step]
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
