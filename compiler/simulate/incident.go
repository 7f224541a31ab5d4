package simulate

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
	"github.com/inferslo/inferslo/spec/engine"
)

// ScenarioOneIncident is the scenario in which an SLO's failures burn and
// the service's other SLOs that read the same counters look on: one
// incident pages once.
const ScenarioOneIncident = "one incident"

// onlookers are the service's SLOs of other kinds of failure of the same
// engine (errors, rejections, incomplete...) that read a counter the SLO's
// bad events are counted from: a vLLM errors SLO beside a rejections SLO
// both read vllm:request_success_total. Two SLOs of one kind (the same
// failures over two windows or budgeting methods) both page by design, and
// latency and goodput SLOs, which a failure burn does not feed, page as
// their own SLIs say (Alertmanager mutes goodput's behind them).
func onlookers(slo model.SLO, service []model.SLO) []model.SLO {
	failure := func(s model.SLO) bool {
		return s.SLI.Bad != nil && s.SLI.Raw == nil && s.SLI.Threshold == nil && s.Inference != nil &&
			(s.Inference.Role == "errors" || engine.IsFailureKind(s.Inference.Role))
	}
	if !failure(slo) {
		return nil
	}
	failing := engine.MetricNames(slo.SLI.Bad.Expr)
	var out []model.SLO
	for _, o := range service {
		if o.Name == slo.Name || !failure(o) || o.Inference.Engine != slo.Inference.Engine || o.Inference.Role == slo.Inference.Role {
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

// oneIncident: the SLO's fast burn replayed through its own rules and those
// of every onlooker at once. The SLO's alert fires in time; every onlooker
// counts the storm's requests and raises no alert of its own, so a failure
// counted by two SLOs (a rejection storm seen by the errors and the
// rejections SLO) pages once.
func (s *sloSim) oneIncident() ([]Check, error) {
	if len(s.onlookers) == 0 {
		return nil, nil
	}
	// The burn goes on past the SLO's alert for the onlookers' longest
	// `for`, so a pending alert of theirs would have time to fire.
	var hold time.Duration
	for _, o := range s.onlookers {
		hold = max(hold, (&sloSim{slo: o}).maxFor())
	}
	p, ok := s.planBurn(hold)
	if !ok {
		return nil, nil
	}
	if s.planned != nil {
		*s.planned = max(*s.planned, p.end())
		return nil, nil
	}
	x := slices.Clone(s.rules)
	for _, o := range s.onlookers {
		x = append(x, s.service[irules.GroupName(o)]...)
	}
	w, err := synth.New(s.slo, s.opts.Shape)
	if err != nil {
		return nil, err
	}
	feeds := func(h *prom.Harness, burning workload.Traffic) ([]*workload.Driver, []workload.Traffic) {
		return []*workload.Driver{workload.NewDriver(h, w, s.budget(), s.scrape(), s.prehistory()).OnlyRead()}, []workload.Traffic{burning}
	}
	// Whether each onlooker counted the burn's requests, read at the end.
	counted := map[string]bool{}
	after := func(h *prom.Harness, t time.Duration) error {
		for _, o := range s.onlookers {
			v, err := h.Query(fmt.Sprintf("%s{%s=%s} > 0", model.EventsRate, model.LabelSLO, strconv.Quote(o.Name)), t)
			if err != nil {
				return &ruleError{at: t, err: err}
			}
			counted[o.Name] = len(v) > 0
		}
		return nil
	}
	first, fired, err := s.replayBeside(p, x, feeds, []string{model.LabelSLO}, model.LabelSLO+"="+strconv.Quote(s.slo.Name), func(prom.AlertKey) bool { return true }, after)
	if err != nil {
		return nil, err
	}
	key, predicted, b, warm, deadline := p.key(), p.predicted, p.b, p.warm, p.deadline
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
		if !counted[o.Name] && pass {
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
