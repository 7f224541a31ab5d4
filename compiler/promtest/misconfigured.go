package promtest

import (
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/rules"
)

// missingBucket builds the test of a histogram served without the
// threshold's bucket while its events flow: every event would count as bad, yet no
// burn-rate alert fires, and SLIMisconfigured names the missing bucket. In a
// grouped SLO only the first group lacks the bucket, and only it is named.
func (b builder) missingBucket(slo model.SLO) (Test, error) {
	name := fmt.Sprintf("%s: a missing threshold bucket raises %s, not a burn alert", slo.Name, model.AlertMisconfigured)
	t, err := b.test(slo, name, 0)
	if err != nil {
		return Test{}, err
	}
	p := query.NewParser()
	var kept []Series
	absentLabels, err := absentBuckets(slo, nil)
	if err != nil {
		return Test{}, err
	}
	for i := range absentLabels {
		for _, g := range slo.GroupBy {
			absentLabels[i][g] = groupValue(slo, 0)
		}
	}
	for _, in := range t.InputSeries {
		ls, _, err := p.ParseSeriesDesc(in.Series + " " + in.Values)
		if err != nil {
			return Test{}, err
		}
		drop := false
		for _, sel := range absentLabels {
			if ls.Get("le") != "" && ls.Get("le") == sel["le"] {
				drop = true
			}
			for _, g := range slo.GroupBy {
				drop = drop && ls.Get(g) == sel[g]
			}
		}
		if !drop {
			kept = append(kept, in)
		}
	}
	t.InputSeries = kept
	if _, ok := b.findRule(slo, alertNamed(model.AlertMisconfigured)); !ok {
		return Test{}, fmt.Errorf("no %s alert", model.AlertMisconfigured)
	}
	evalAt := b.evalTime()
	if at := (rules.MisconfiguredFor(slo.BaseWindow()) + 5*b.eval).Truncate(b.eval) + b.eval; at > evalAt {
		evalAt = at
	}
	// The series must reach the evaluation time.
	steps := int((evalAt+b.eval)/slo.Scrape()) + 1
	for i := range t.InputSeries {
		v := t.InputSeries[i].Values
		t.InputSeries[i].Values = v[:strings.LastIndex(v, "x")+1] + strconv.Itoa(steps)
	}
	// Every SLO of the service reading these series may miss a bucket of
	// its own in them (another SLO on the same histogram with another
	// threshold): each of their alerts is expected too.
	var series []labels.Labels
	for _, in := range t.InputSeries {
		ls, _, err := p.ParseSeriesDesc(in.Series + " " + in.Values)
		if err != nil {
			return Test{}, err
		}
		series = append(series, ls)
	}
	var exp []ExpectedAlert
	for _, other := range b.slos {
		rule, ok := b.findRule(other, alertNamed(model.AlertMisconfigured))
		if !ok || len(other.Alerting.Tiers) == 0 {
			continue
		}
		missing, err := absentBuckets(other, series)
		if err != nil {
			return Test{}, err
		}
		for _, lbls := range missing {
			e, err := b.firing(rule, lbls, 1, evalAt)
			if err != nil {
				return Test{}, err
			}
			exp = append(exp, e)
		}
	}
	sort.Slice(exp, func(i, j int) bool {
		return labels.FromMap(exp[i].Labels).String() < labels.FromMap(exp[j].Labels).String()
	})
	at := model.FormatDuration(evalAt)
	t.Alerts = []AlertTest{{EvalTime: at, Alertname: model.AlertBurn}, {EvalTime: at, Alertname: model.AlertMisconfigured, ExpAlerts: exp}}
	return t, nil
}

// absentBuckets lists the labels of the SLIMisconfigured alerts an SLO
// raises over the given series: per threshold bucket, and per group of a
// grouped SLO, the bucket's series missing while its histogram's count is
// there. The labels are the bucket's le with the group's labels, or the
// selector's equality matchers when the SLO is not grouped. With no series
// it lists the labels of every bucket, group labels left to the caller.
func absentBuckets(slo model.SLO, series []labels.Labels) ([]map[string]string, error) {
	p := query.NewParser()
	var total parser.Expr
	if series != nil {
		if slo.SLI.Total == nil {
			return nil, nil
		}
		var err error
		if total, err = p.ParseExpr(slo.SLI.Total.Expr); err != nil {
			return nil, err
		}
	}
	var out []map[string]string
	for _, sel := range slo.SLI.ThresholdBuckets() {
		ms, err := p.ParseMetricSelector(sel)
		if err != nil {
			return nil, err
		}
		lbls := map[string]string{}
		for _, m := range ms {
			if m.Type == labels.MatchEqual && m.Name != query.MetricNameLabel && (len(slo.GroupBy) == 0 || m.Name == "le") {
				lbls[m.Name] = m.Value
			}
		}
		if series == nil {
			out = append(out, lbls)
			continue
		}
		matching := func(ms []*labels.Matcher, group map[string]string) bool {
			for _, ls := range series {
				ok := true
				for _, m := range ms {
					ok = ok && m.Matches(ls.Get(m.Name))
				}
				for k, v := range group {
					ok = ok && ls.Get(k) == v
				}
				if ok {
					return true
				}
			}
			return false
		}
		// The rule counts the events by the SLI's total query.
		var counted []labels.Labels
		for _, ls := range series {
			for _, vs := range query.Selectors(total) {
				ok := true
				for _, m := range vs.LabelMatchers {
					ok = ok && m.Matches(ls.Get(m.Name))
				}
				if ok {
					counted = append(counted, ls)
					break
				}
			}
		}
		for _, g := range groupsOf(slo, counted) {
			if matching(ms, g.labels) {
				continue
			}
			a := maps.Clone(lbls)
			for k, v := range g.labels {
				if v != "" {
					a[k] = v
				}
			}
			out = append(out, a)
		}
	}
	return out, nil
}
