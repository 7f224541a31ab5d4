package simulate

import (
	"fmt"
	"time"

	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
)

// burnPlan is a fast burn replayed beside other traffic or other rules in
// one Prometheus: the tier it proves, its factor, and when it starts, is
// predicted to fire and is given up on.
type burnPlan struct {
	tier                      model.Tier
	b                         float64
	warm, predicted, deadline time.Duration
	// hold is how long the burn goes on after the alert fires, so a
	// pending alert of the traffic beside it has time to fire.
	hold time.Duration
}

func (p burnPlan) key() prom.AlertKey {
	return prom.AlertKey{Name: model.AlertBurn, Severity: p.tier.Severity}
}

// end is the last step the replay may take.
func (p burnPlan) end() time.Duration { return p.deadline + p.hold }

// planBurn plans the fast burn of burnTier, or reports that no burn fires.
func (s *sloSim) planBurn(hold time.Duration) (burnPlan, bool) {
	tier, b, ok := s.burnTier()
	if !ok {
		return burnPlan{}, false
	}
	warm := s.warmup()
	detectT, ok := predict.TierDetect(tier, warm, workload.HealthyBurn, b, s.sliceLag(b))
	if !ok {
		return burnPlan{}, false
	}
	predicted := detectT + tier.For + s.slo.BaseWindow() + s.evalOrDefault()
	return burnPlan{tier: tier, b: b, warm: warm, predicted: predicted, deadline: warm + 2*predicted, hold: hold}, true
}

// burnTier is the tier a fast burn proves and its factor: the page tier, or
// the ticket of an SLO that pages nobody under the burn that would page with
// the workbook's tiers.
func (s *sloSim) burnTier() (model.Tier, float64, bool) {
	if tier, ok := predict.TierBySeverity(s.slo, model.PageTier); ok {
		return tier, s.fastFactor(predict.Factors(tier)), true
	}
	tier, ok := predict.TierBySeverity(s.slo, model.TicketTier)
	if !ok {
		return model.Tier{}, 0, false
	}
	b := s.fastFactor(predict.Factors(tier))
	if page, err := model.WorkbookTiersOf([]string{model.PageTier}, s.slo.Window, 4*s.scrape(), s.slo.Evaluation); err == nil {
		b = s.fastFactor(predict.Factors(page[0]))
	}
	return tier, b, true
}

// replayBeside replays the plan in one Prometheus evaluating x: feeds
// returns the drivers and their traffic given the burning traffic. It
// returns the first firing of each alert keep selects, by the group its
// by labels name, and when the burning group's (own) alert fired (-1:
// not by the deadline); after, if set, reads the Prometheus at the last
// step.
func (s *sloSim) replayBeside(p burnPlan, x prom.RuleIndex, feeds func(h *prom.Harness, burning workload.Traffic) ([]*workload.Driver, []workload.Traffic),
	by []string, own string, keep func(prom.AlertKey) bool, after func(h *prom.Harness, t time.Duration) error) (map[string]map[prom.AlertKey]time.Duration, time.Duration, error) {
	h, err := prom.NewIndexedHarness(x, false, s.opts.Scratch)
	if err != nil {
		return nil, 0, err
	}
	h.Stepwise = s.evaluation != spans
	defer h.Close()
	if len(h.Groups) == 0 {
		return nil, 0, &ruleError{err: fmt.Errorf("no rule group %s in the rule files", s.groupName())}
	}
	s.eval = h.Groups[0].Interval()
	end := p.end()
	if err := s.checkSteps(end, s.prehistory()); err != nil {
		return nil, 0, err
	}
	drivers, loads := feeds(h, s.scaled(func(t time.Duration) (float64, float64) {
		if t > p.warm {
			return 1, p.b
		}
		return 1, workload.HealthyBurn
	}))
	key := p.key()
	fired := time.Duration(-1)
	first := map[string]map[prom.AlertKey]time.Duration{}
	advance := func(t time.Duration) error {
		for i, d := range drivers {
			if err := d.Advance(t, loads[i], nil); err != nil {
				return err
			}
		}
		return nil
	}
	// The alert fires by the prediction, when it passes.
	s.likelyStops = []time.Duration{p.warm + p.predicted + p.hold}
	defer func() { s.likelyStops = nil }()
	last, err := s.evalSpans(h, 0, end, advance, func(t time.Duration) bool {
		for g, st := range prom.GroupAlertStates(h, by) {
			for k, v := range st {
				if _, seen := first[g][k]; !seen && v == rules.StateFiring && keep(k) {
					if first[g] == nil {
						first[g] = map[prom.AlertKey]time.Duration{}
					}
					first[g][k] = t
				}
			}
		}
		if at, ok := first[own][key]; ok && fired < 0 {
			fired = at
		}
		return (fired >= 0 && t >= fired+p.hold) || (fired < 0 && t >= p.deadline)
	})
	if err != nil {
		return nil, 0, evalError(err)
	}
	s.simulated += last + s.eval
	if after != nil {
		if err := after(h, last); err != nil {
			return nil, 0, err
		}
	}
	return first, fired, nil
}
