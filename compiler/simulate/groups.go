package simulate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/inferslo/inferslo/compiler/model"
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
	p, ok := s.planBurn(s.maxFor())
	if !ok {
		// The fast and slow burns report a tier no burn can fire.
		return nil, nil
	}
	if s.planned != nil {
		*s.planned = max(*s.planned, p.end())
		return nil, nil
	}
	groups, err := s.twoGroups()
	if err != nil {
		c := s.check(ScenarioGroupBurn, "groups", "two groups", fmt.Sprintf("not replayed: %v", err), true)
		c.NotProven = true
		return []Check{c}, nil
	}
	feeds := func(h *prom.Harness, burning workload.Traffic) ([]*workload.Driver, []workload.Traffic) {
		return []*workload.Driver{workload.NewDriver(h, groups[0].Workload, s.budget(), s.scrape(), s.prehistory()).OnlyRead(), workload.NewDriver(h, groups[1].Workload, s.budget(), s.scrape(), s.prehistory()).OnlyRead()},
			[]workload.Traffic{burning, s.scaled(workload.Constant(1, workload.HealthyBurn))}
	}
	first, fired, err := s.replayBeside(p, s.rules, feeds, s.slo.GroupBy, groups[0].Name, func(k prom.AlertKey) bool { return k.Name == model.AlertBurn }, nil)
	if err != nil {
		return nil, err
	}
	key, predicted, b, warm, deadline := p.key(), p.predicted, p.b, p.warm, p.deadline
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
