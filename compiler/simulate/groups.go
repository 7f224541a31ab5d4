package simulate

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
)

// ScenarioGroupBurn is the scenario of a grouped SLO (groupBy) in which one
// group burns while another stays healthy.
const ScenarioGroupBurn = "one group burning"

// groupBurn: two groups of a grouped SLO, one under the fast burn of the
// page tier (the quickest ticket of an SLO that pages nobody), the other at
// half the budget rate. The burning group's alert fires in time and names
// that group; no burn alert fires for the other group, nor for no group at
// all. Rules whose window pairs were joined without the grouping labels, or
// that sum the groups away, page for every group and fail here.
func (s *sloSim) groupBurn() ([]Check, error) {
	if len(s.slo.GroupBy) == 0 {
		return nil, nil
	}
	tier, b, ok := s.burnTier()
	if !ok {
		return nil, nil
	}
	warm := s.warmup()
	detectT, ok := predict.TierDetect(tier, warm, workload.HealthyBurn, b, s.sliceLag(b))
	if !ok {
		// The fast and slow burns report a tier no burn can fire.
		return nil, nil
	}
	predicted := detectT + tier.For + s.slo.BaseWindow() + s.evalOrDefault()
	deadline := warm + 2*predicted
	// The burn goes on one `for` after the alert fires, so a pending alert
	// of the healthy group would have time to fire.
	end := deadline + s.maxFor()
	if s.planned != nil {
		*s.planned = max(*s.planned, end)
		return nil, nil
	}
	groups, err := s.twoGroups()
	if err != nil {
		c := s.check(ScenarioGroupBurn, "groups", "two groups", fmt.Sprintf("not replayed: %v", err), true)
		c.NotProven = true
		return []Check{c}, nil
	}
	h, err := prom.NewIndexedHarness(s.rules, false, s.opts.Scratch)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if len(h.Groups) == 0 {
		return nil, &ruleError{err: fmt.Errorf("no rule group %s in the rule files", s.groupName())}
	}
	s.eval = h.Groups[0].Interval()
	if err := s.checkSteps(end, s.prehistory()); err != nil {
		return nil, err
	}
	burning := s.scaled(func(t time.Duration) (float64, float64) {
		if t > warm {
			return 1, b
		}
		return 1, workload.HealthyBurn
	})
	drivers := []*workload.Driver{workload.NewDriver(h, groups[0].Workload, s.budget(), s.scrape(), s.prehistory()), workload.NewDriver(h, groups[1].Workload, s.budget(), s.scrape(), s.prehistory())}
	loads := []workload.Traffic{burning, s.scaled(workload.Constant(1, workload.HealthyBurn))}
	key := prom.AlertKey{Name: model.AlertBurn, Severity: tier.Severity}
	fired := time.Duration(-1)
	// First firing of each burn alert, by the group its labels name.
	first := map[string]map[prom.AlertKey]time.Duration{}
	var t time.Duration
	for t = 0; t <= end; t += s.eval {
		for i, d := range drivers {
			if err := d.Advance(t, loads[i], nil); err != nil {
				return nil, err
			}
		}
		if err := h.Eval(t); err != nil {
			return nil, &ruleError{at: t, err: err}
		}
		for g, st := range prom.GroupAlertStates(h, s.slo.GroupBy) {
			for k, v := range st {
				if _, seen := first[g][k]; !seen && v == rules.StateFiring && k.Name == model.AlertBurn {
					if first[g] == nil {
						first[g] = map[prom.AlertKey]time.Duration{}
					}
					first[g][k] = t
				}
			}
		}
		if at, ok := first[groups[0].Name][key]; ok && fired < 0 {
			fired = at
		}
		if (fired >= 0 && t >= fired+s.maxFor()) || (fired < 0 && t >= deadline) {
			break
		}
	}
	s.simulated += min(t, end) + s.eval
	c := s.check(ScenarioGroupBurn, fmt.Sprintf("%s{severity=%q,%s}", key.Name, key.Severity, groups[0].Name),
		fmt.Sprintf("fires within %s of a %.4gx burn on %s alone", dur(predicted), b, groups[0].Name), "", false)
	c.Predicted = predicted
	c.observeFire(fired, warm, deadline)
	out := []Check{c}
	// Every burn alert of a group other than the burning one, the healthy
	// group's and any naming no group, must stay silent.
	var others []string
	for g := range first {
		if g != groups[0].Name {
			others = append(others, g)
		}
	}
	sort.Strings(others)
	var loud []string
	for _, g := range others {
		for k, at := range first[g] {
			loud = append(loud, fmt.Sprintf("{severity=%q,%s} fired after %s", k.Severity, g, dur(at-warm)))
		}
	}
	sort.Strings(loud)
	obs, pass := "silent", len(loud) == 0
	if !pass {
		obs = strings.Join(loud, "; ")
	}
	out = append(out, s.check(ScenarioGroupBurn, fmt.Sprintf("%s{%s}", model.AlertBurn, groups[1].Name),
		fmt.Sprintf("silent, for every other group too, while %s burns", groups[0].Name), obs, pass))
	return out, nil
}

// twoGroups builds the series of two groups of the grouped SLO.
func (s *sloSim) twoGroups() ([]synth.Group, error) {
	return synth.Grouped(s.slo, s.opts.Shape, 2)
}
