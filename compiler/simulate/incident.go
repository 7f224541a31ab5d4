package simulate

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
	"github.com/inferslo/inferslo/spec/engine"
)

// ScenarioOneIncident is the scenario in which an SLO's failures burn and
// the service's other SLOs that read the same counters look on: one
// incident pages once.
const ScenarioOneIncident = "one incident"

// onlookers are the other ratio SLOs of the service that read a counter
// the SLO's bad events are counted from and count another kind of failure
// of the same engine: a vLLM errors SLO beside a rejections SLO both read
// vllm:request_success_total. Two SLOs of one kind (the same failures over
// two windows or budgeting methods) both page by design.
func onlookers(slo model.SLO, service []model.SLO) []model.SLO {
	if slo.SLI.Bad == nil || slo.Inference == nil {
		return nil
	}
	failing := engine.MetricNames(slo.SLI.Bad.Expr)
	var out []model.SLO
	for _, o := range service {
		if o.Name == slo.Name || o.SLI.Raw != nil || o.SLI.Threshold != nil || o.Inference == nil ||
			o.Inference.Engine != slo.Inference.Engine || o.Inference.Role == slo.Inference.Role {
			continue
		}
		for _, q := range []*model.Query{o.SLI.Total, o.SLI.Good, o.SLI.Bad} {
			if q != nil && slices.ContainsFunc(engine.MetricNames(q.Expr), func(n string) bool { return slices.Contains(failing, n) }) {
				out = append(out, o)
				break
			}
		}
	}
	return out
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

// oneIncident: the SLO's fast burn replayed through its own rules and those
// of every onlooker at once. The SLO's alert fires in time; every onlooker
// counts the storm's requests and raises no alert of its own, so a failure
// counted by two SLOs (a rejection storm seen by the errors and the
// rejections SLO) pages once.
func (s *sloSim) oneIncident() ([]Check, error) {
	if len(s.onlookers) == 0 {
		return nil, nil
	}
	tier, b, ok := s.burnTier()
	if !ok {
		return nil, nil
	}
	warm := s.warmup()
	detectT, ok := predict.TierDetect(tier, warm, workload.HealthyBurn, b, s.sliceLag(b))
	if !ok {
		return nil, nil
	}
	predicted := detectT + tier.For + s.slo.BaseWindow() + s.evalOrDefault()
	deadline := warm + 2*predicted
	// The burn goes on past the SLO's alert for the onlookers' longest
	// `for`, so a pending alert of theirs would have time to fire.
	var hold time.Duration
	for _, o := range s.onlookers {
		hold = max(hold, (&sloSim{slo: o}).maxFor())
	}
	end := deadline + hold
	if s.planned != nil {
		*s.planned = max(*s.planned, end)
		return nil, nil
	}
	x := slices.Clone(s.rules)
	for _, o := range s.onlookers {
		x = append(x, s.service[irules.GroupName(o)]...)
	}
	h, err := prom.NewIndexedHarness(x, false, s.opts.Scratch)
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
	w, err := synth.New(s.slo, s.opts.Shape)
	if err != nil {
		return nil, err
	}
	d := workload.NewDriver(h, w, s.budget(), s.scrape(), s.prehistory())
	load := s.scaled(func(t time.Duration) (float64, float64) {
		if t > warm {
			return 1, b
		}
		return 1, workload.HealthyBurn
	})
	own := strconv.Quote(s.slo.Name)
	key := prom.AlertKey{Name: model.AlertBurn, Severity: tier.Severity}
	fired := time.Duration(-1)
	// First firing of each alert, by the SLO its labels name.
	first := map[string]map[prom.AlertKey]time.Duration{}
	var t time.Duration
	for t = 0; t <= end; t += s.eval {
		if err := d.Advance(t, load, nil); err != nil {
			return nil, err
		}
		if err := h.Eval(t); err != nil {
			return nil, &ruleError{at: t, err: err}
		}
		for slo, st := range prom.GroupAlertStates(h, []string{model.LabelSLO}) {
			for k, v := range st {
				if _, seen := first[slo][k]; !seen && v == rules.StateFiring {
					if first[slo] == nil {
						first[slo] = map[prom.AlertKey]time.Duration{}
					}
					first[slo][k] = t
				}
			}
		}
		if at, ok := first[model.LabelSLO+"="+own][key]; ok && fired < 0 {
			fired = at
		}
		if (fired >= 0 && t >= fired+hold) || (fired < 0 && t >= deadline) {
			break
		}
	}
	s.simulated += min(t, end) + s.eval
	c := s.check(ScenarioOneIncident, key.String(), fmt.Sprintf("fires within %s of a %.4gx burn, with %s evaluated beside it",
		dur(predicted), b, names(s.onlookers)), "", false)
	c.Predicted = predicted
	c.observeFire(fired, warm, deadline)
	out := []Check{c}
	for _, o := range s.onlookers {
		var loud []string
		for k, at := range first[model.LabelSLO+"="+strconv.Quote(o.Name)] {
			loud = append(loud, fmt.Sprintf("%s fired after %s", k, dur(at-warm)))
		}
		sort.Strings(loud)
		obs, pass := "silent", len(loud) == 0
		if !pass {
			obs = strings.Join(loud, "; ")
		}
		c := s.check(ScenarioOneIncident, fmt.Sprintf("%s{slo=%q}", model.AlertBurn, o.Name),
			fmt.Sprintf("silent while %s burns: every alert of it, though it counts the same requests", s.slo.Name), obs, pass)
		// An onlooker that counts none of the burn's requests (it reads
		// series the burning SLO's queries do not select) proves nothing
		// by staying silent.
		v, err := h.Query(fmt.Sprintf("%s{%s=%s} > 0", model.EventsRate, model.LabelSLO, strconv.Quote(o.Name)), min(t, end))
		if err != nil {
			return nil, &ruleError{at: min(t, end), err: err}
		}
		if len(v) == 0 && pass {
			c.Observed, c.NotProven = "not proven: it counted none of the burn's requests", true
		}
		out = append(out, c)
	}
	return out, nil
}

// names lists SLOs' names, joined by commas.
func names(slos []model.SLO) string {
	out := make([]string, len(slos))
	for i, o := range slos {
		out[i] = o.Name
	}
	return strings.Join(out, ", ")
}
