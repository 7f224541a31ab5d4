package promtest

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/template"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/templates"
)

// expected lists the firing ErrorBudgetBurn alerts of the service when the
// given series grow by the given increments per scrape.
func (b builder) expected(inputs []synth.Input, scrape, at time.Duration) ([]ExpectedAlert, error) {
	series := labelsOf(inputs)
	var out []ExpectedAlert
	for _, slo := range b.slos {
		if !countable(slo) {
			continue
		}
		for _, g := range groupsOf(slo, series) {
			var gi []synth.Input
			for _, i := range g.series {
				gi = append(gi, inputs[i])
			}
			total, bad, err := synth.Events(slo, gi)
			if err != nil {
				return nil, err
			}
			if total <= 0 || bucketMissing(slo, series) {
				continue
			}
			burn := bad / total / slo.ErrorBudget().Float()
			if ts := slo.Timeslices; ts != nil && !ts.Average {
				// Every slice has the same ratio: all bad, or all good.
				burn = 0
				if 1-bad/total < ts.Target.Float() {
					burn = 1 / slo.ErrorBudget().Float()
				}
			}
			rate := total / scrape.Seconds()
			for _, tier := range burnTiers(slo) {
				if !fires(tier, burn, rate, slo.Alerting.MinEventsPerSecond.Float()) {
					continue
				}
				a, err := b.alert(slo, tier, burn, at, g.labels)
				if err != nil {
					return nil, err
				}
				out = append(out, a)
			}
		}
	}
	key := func(a ExpectedAlert) string {
		return labels.FromMap(a.Labels).String()
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Labels["slo"]+out[i].Labels["severity"]+key(out[i]) < out[j].Labels["slo"]+out[j].Labels["severity"]+key(out[j])
	})
	return out, nil
}

type group struct {
	labels map[string]string // the grouping labels' values
	series []int
}

// groupsOf splits series by the SLO's grouping labels, in order of first
// appearance: each group is counted, and alerts, on its own.
func groupsOf(slo model.SLO, series []labels.Labels) []group {
	var out []group
	index := map[string]int{}
	for i, ls := range series {
		g := map[string]string{}
		for _, l := range slo.GroupBy {
			g[l] = ls.Get(l)
		}
		k := labels.FromMap(g).String()
		j, ok := index[k]
		if !ok {
			j = len(out)
			index[k] = j
			out = append(out, group{labels: g})
		}
		out[j].series = append(out[j].series, i)
	}
	return out
}

// fires tells whether a constant burn keeps some pair of the tier above its
// factor; a burn within 5% of a factor is refused by tierBurn's choices.
func fires(tier model.Tier, burn, rate, minRate float64) bool {
	return rate >= minRate && slices.ContainsFunc(tier.Windows, func(p model.WindowPair) bool { return burn > p.Factor.Float() })
}

// alert is the expected alert of one tier: the rule's labels plus the
// recorded series' identity, and its annotations expanded the way the
// rules manager does, with the burn rate as $value.
func (b builder) alert(slo model.SLO, tier model.Tier, burn float64, at time.Duration, group map[string]string) (ExpectedAlert, error) {
	rule, ok := b.findRule(slo, func(r rulefmt.Rule) bool {
		return r.Alert == model.AlertBurn && r.Labels[model.LabelBurnTier] == tier.Severity
	})
	if !ok {
		return ExpectedAlert{}, fmt.Errorf("no %s alert for tier %s", model.AlertBurn, tier.Severity)
	}
	id := map[string]string{model.LabelSLO: slo.Name, model.LabelService: slo.Service.Name, model.LabelSLI: model.SLIName(slo)}
	for k, v := range group {
		if v != "" {
			id[k] = v
		}
	}
	return b.firing(rule, id, burn, at)
}

// firing is the alert rule raises for a series labelled series at value:
// the series' labels with the rule's, and the annotations expanded with the
// series' labels, as Prometheus expands them.
func (b builder) firing(rule rulefmt.Rule, series map[string]string, value float64, at time.Duration) (ExpectedAlert, error) {
	lbls := maps.Clone(series)
	maps.Copy(lbls, rule.Labels)
	ann := map[string]string{}
	for k, text := range rule.Annotations {
		v, err := b.expand(rule.Alert, text, series, value, at)
		if err != nil {
			return ExpectedAlert{}, fmt.Errorf("annotation %s: %w", k, err)
		}
		ann[k] = v
	}
	return ExpectedAlert{Labels: lbls, Annotations: ann}, nil
}

// findRule is the first rule of the SLO's group that is; false when none
// is.
func (b builder) findRule(slo model.SLO, is func(rulefmt.Rule) bool) (rulefmt.Rule, bool) {
	for _, g := range b.groups {
		if g.Name != rules.GroupName(slo) {
			continue
		}
		if i := slices.IndexFunc(g.Rules, is); i >= 0 {
			return g.Rules[i], true
		}
	}
	return rulefmt.Rule{}, false
}

// alertNamed matches an alerting rule by name.
func alertNamed(name string) func(rulefmt.Rule) bool {
	return func(r rulefmt.Rule) bool { return r.Alert == name }
}

// expand renders an annotation template as the rules manager would: the
// alert's value is the burn rate; a query for an SLO's budget remaining
// answers 1 - its burn rate, which is what the recordings hold when every
// window sees the same burn.
func (b builder) expand(alert, text string, id map[string]string, burn float64, at time.Duration) (string, error) {
	query := func(_ context.Context, q string, _ time.Time) (promql.Vector, error) {
		sel, err := query.NewParser().ParseMetricSelector(q)
		if err != nil {
			return nil, err
		}
		name, slo := "", ""
		for _, m := range sel {
			switch m.Name {
			case query.MetricNameLabel:
				name = m.Value
			case model.LabelSLO:
				slo = m.Value
			}
		}
		if name != model.BudgetRemaining || slo != id[model.LabelSLO] {
			return nil, fmt.Errorf("the expected annotations cannot answer query %q", q)
		}
		ls := labels.FromMap(map[string]string{query.MetricNameLabel: name, model.LabelSLO: slo})
		return promql.Vector{promql.Sample{Metric: ls, F: 1 - burn}}, nil
	}
	smpl := promql.Sample{Metric: labels.FromMap(id), F: burn}
	data := template.AlertTemplateData(id, nil, "", smpl)
	ts := prommodel.Time(time.Unix(0, 0).Add(at).UnixMilli())
	out, err := template.NewTemplateExpander(context.Background(), templates.PrometheusDefs+text, "__alert_"+alert, data, ts,
		template.QueryFunc(query), &url.URL{}, nil).Expand()
	if err != nil {
		return "", err
	}
	return out, nil
}

// seriesName prints a series the way promtool's input_series reads it:
// metric name, then the labels in order; a UTF-8 name that is not a
// legacy Prometheus name goes quoted (inside the braces, for a metric).
func seriesName(ls labels.Labels) string {
	var parts []string
	ls.Range(func(l labels.Label) {
		if l.Name == query.MetricNameLabel {
			return
		}
		name := l.Name
		if !query.ValidLabelName(name) {
			name = strconv.Quote(name)
		}
		parts = append(parts, fmt.Sprintf("%s=%q", name, l.Value))
	})
	metric := ls.Get(query.MetricNameLabel)
	if !query.ValidMetricName(metric) {
		return "{" + strings.Join(append([]string{strconv.Quote(metric)}, parts...), ", ") + "}"
	}
	return metric + "{" + strings.Join(parts, ", ") + "}"
}
