package promtest

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// burnTiers are the tiers of an SLO's burn alerts, the outage tier last.
func burnTiers(slo model.SLO) []model.Tier {
	if o := slo.Alerting.Outage; o != nil {
		return append(append([]model.Tier(nil), slo.Alerting.Tiers...), *o)
	}
	return slo.Alerting.Tiers
}

// signalTests are the tests of the load-shedding recordings, of the outage
// tier (every request failing pages it, with whichever other tiers fire)
// and of the queue-backlog warning (fires above its threshold per replica,
// silent below).
func (b builder) signalTests(slo model.SLO) ([]Test, error) {
	out, err := b.sheddingTests(slo)
	if err != nil {
		return nil, err
	}
	if slo.Alerting.Outage != nil && (slo.SLI.Threshold == nil) {
		t, err := b.test(slo, fmt.Sprintf("%s: the outage alert fires when every request fails%s", slo.Name, groupsNote(slo)), 1/slo.ErrorBudget().Float())
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	bl, inf := slo.Alerting.Backlog, slo.Inference
	if bl == nil || inf == nil || inf.Signals.QueueDepth == "" {
		return out, nil
	}
	rule, ok := b.findRule(slo, alertNamed(rules.AlertBacklog))
	if !ok {
		return nil, fmt.Errorf("no %s alert in the rules", rules.AlertBacklog)
	}
	base, ok := selectorLabels(inf.Selector)
	if !ok {
		// A regex selector leaves no one value to write.
		return out, nil
	}
	limit := bl.PerReplica.Float()
	for _, c := range []struct {
		name  string
		share float64
	}{
		{fmt.Sprintf("%s: %s fires with %s waiting requests per replica", slo.Name, rules.AlertBacklog, trim(limit*1.5)), 1.5},
		{fmt.Sprintf("%s: %s is silent with %s waiting requests per replica", slo.Name, rules.AlertBacklog, trim(limit*0.5)), 0.5},
	} {
		t, err := b.backlogTest(slo, rule, base, c.name, limit*c.share)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// backlogTest writes two replicas' queue gauges, one a third above the
// mean and one a third below, per group, and expects the warning for every
// group when the mean is above the threshold.
func (b builder) backlogTest(slo model.SLO, rule rulefmt.Rule, base map[string]string, name string, mean float64) (Test, error) {
	scrape := slo.Scrape()
	at := time.Duration(rule.For) + 3*b.eval
	steps := int(at/scrape) + 1
	t := Test{Name: name, Interval: model.FormatDuration(scrape)}
	groups := []map[string]string{{}}
	if len(slo.GroupBy) > 0 {
		groups = nil
		for i := range 2 {
			g := map[string]string{}
			for _, l := range slo.GroupBy {
				g[l] = groupValue(slo, i)
			}
			groups = append(groups, g)
		}
	}
	var exp []ExpectedAlert
	for _, g := range groups {
		for pod, v := range []float64{mean * 4 / 3, mean * 2 / 3} {
			ls := maps.Clone(base)
			maps.Copy(ls, g)
			ls["pod"] = fmt.Sprintf("replica-%d", pod)
			ls[query.MetricNameLabel] = slo.Inference.Signals.QueueDepth
			t.InputSeries = append(t.InputSeries, Series{Series: seriesName(labels.FromMap(ls)), Values: fmt.Sprintf("%sx%d", strconv.FormatFloat(v, 'f', -1, 64), steps)})
		}
		if mean <= slo.Alerting.Backlog.PerReplica.Float() {
			continue
		}
		a, err := b.firing(rule, g, mean, at)
		if err != nil {
			return Test{}, err
		}
		exp = append(exp, a)
	}
	t.Alerts = []AlertTest{{EvalTime: model.FormatDuration(at), Alertname: rules.AlertBacklog, ExpAlerts: exp}}
	return t, nil
}

// selectorLabels are the label values a selector's equality matchers
// name; false when it has other matchers.
func selectorLabels(sel string) (map[string]string, bool) {
	out := map[string]string{}
	if strings.TrimSpace(sel) == "" {
		return out, true
	}
	ms, err := query.NewParser().ParseMetricSelector("{" + sel + "}")
	if err != nil {
		return nil, false
	}
	for _, m := range ms {
		if m.Type != labels.MatchEqual {
			return nil, false
		}
		out[m.Name] = m.Value
	}
	return out, true
}
