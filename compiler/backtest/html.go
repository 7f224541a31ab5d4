package backtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/render"
	"github.com/inferslo/inferslo/compiler/safetext"
)

// HTML draws the report as a page, with the review page's charts: for
// each SLO group the error budget spent over the range against the pace
// that spends exactly one window's budget, and the burn rate against the
// alert tiers' factors, the fired alerts shaded on both.
func (r *Report) HTML(set model.Set, source string) ([]byte, error) {
	slos := map[string]model.SLO{}
	for _, s := range set.SLOs {
		slos[s.Name] = s
	}
	var sections []render.Section
	bucket := time.Duration(0)
	for i, g := range r.SLOs {
		slo, ok := slos[g.SLO]
		if !ok {
			continue
		}
		if len(g.Timeline) > 0 {
			bucket = g.Timeline[0].To.Sub(g.Timeline[0].From)
			if len(g.Timeline) > 1 {
				bucket = g.Timeline[1].To.Sub(g.Timeline[1].From)
			}
		}
		alerts := r.groupAlerts(g)
		sections = append(sections, render.Section{
			ID:     fmt.Sprintf("slo-%d", i),
			Title:  sectionTitle(g),
			Note:   r.sectionNote(slo, g, alerts),
			Charts: []render.Chart{budgetChart(slo, g, r.From, r.To), burnChart(slo, render.Series{Name: "burn rate"}, g.Timeline)},
			Alerts: alerts,
		})
		if len(g.Zoom) > 0 {
			lo, hi := g.Zoom[0].From, g.Zoom[len(g.Zoom)-1].To
			zoomed := burnChart(slo, render.Series{Name: "burn rate"}, g.Zoom)
			zoomed.Title = "Burn rate around the first page, zoomed"
			sections = append(sections, render.Section{
				ID:    fmt.Sprintf("slo-%d-page", i),
				Title: sectionTitle(g) + ": first page",
				Note: fmt.Sprintf("%s to %s in %s buckets: the six hours before the page fired to two hours after it resolved.",
					lo.UTC().Format("Jan 2 15:04"), hi.UTC().Format("Jan 2 15:04"), model.FormatDuration(g.Zoom[0].To.Sub(g.Zoom[0].From))),
				Charts: []render.Chart{zoomed},
				Alerts: alerts,
				From:   lo,
				To:     hi,
			})
		}
	}
	if len(sections) == 0 {
		return nil, fmt.Errorf("no SLO of the report is in the set")
	}
	intro := fmt.Sprintf("What these SLOs' rules would have said over the history read from %s: every alert interval shaded (red pages, orange tickets).", safetext.URL(source))
	if bucket > 0 {
		intro += fmt.Sprintf(" Burn rates are averaged over %s buckets, while the alerts fire on their own long and short windows, so a short burn that paged can show below its tier's line.", model.FormatDuration(bucket))
	}
	return render.Charts("inferslo backtest", intro, r.From, r.To, sections)
}

func sectionTitle(g SLOReport) string {
	if len(g.Labels) == 0 {
		return "SLO " + g.SLO
	}
	return "SLO " + g.SLO + " " + groupText(g.Labels, nil)
}

// groupAlerts are the report's alerts of an SLO group, as bands.
func (r *Report) groupAlerts(g SLOReport) []render.Alert {
	out := []render.Alert{}
	for _, a := range r.Alerts {
		if a.SLO != g.SLO || !sameGroup(a.Labels, g.Labels) {
			continue
		}
		to := r.To
		if a.ResolvedAt != nil {
			to = *a.ResolvedAt
		}
		out = append(out, render.Alert{Name: a.AlertName, Severity: a.Severity, SLO: a.SLO, Group: groupText(g.Labels, nil), From: a.FiredAt, To: to})
	}
	return out
}

func sameGroup(alert, group map[string]string) bool {
	for k, v := range group {
		if alert[k] != v {
			return false
		}
	}
	return true
}

func (r *Report) sectionNote(slo model.SLO, g SLOReport, alerts []render.Alert) string {
	if g.SLI == nil {
		return "No traffic over the range."
	}
	count := map[string]int{}
	for _, a := range alerts {
		count[a.Severity]++
	}
	fired := "no alert fired"
	if len(count) > 0 {
		var parts []string
		for _, sev := range slices.Sorted(maps.Keys(count)) {
			parts = append(parts, fmt.Sprintf("%s × %d", sev, count[sev]))
		}
		fired = "alerts fired: " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("Objective %s over %s. SLI %s over %s; %s of one window's error budget spent; %s.",
		slo.Objective.Percent(), model.FormatDuration(slo.Window), percent(*g.SLI), model.FormatDuration(r.To.Sub(r.From).Round(time.Minute)),
		percent(*g.BudgetSpent), fired)
}

// budgetChart is the budget spent from the range's start, beside the even
// pace that spends exactly one window's budget over one window.
func budgetChart(slo model.SLO, g SLOReport, from, to time.Time) render.Chart {
	spent := render.Series{Name: "budget spent"}
	if len(g.Timeline) > 0 {
		spent.Points = append(spent.Points, render.Point{Time: g.Timeline[0].From, Value: 0})
	}
	top := 0.0
	for _, b := range g.Timeline {
		spent.Points = append(spent.Points, render.Point{Time: b.To, Value: b.Spent})
		top = max(top, b.Spent)
	}
	paceEnd := float64(to.Sub(from)) / float64(slo.Window)
	pace := render.Series{Name: "even pace (one budget per " + model.FormatDuration(slo.Window) + ")",
		Points: []render.Point{{Time: from, Value: 0}, {Time: to, Value: paceEnd}}}
	c := render.Chart{
		Title:       "Error budget spent since " + from.UTC().Format("Jan 2 15:04"),
		Description: "Bad events so far over the bad events one " + model.FormatDuration(slo.Window) + " window allows at the range's traffic; 100% is the whole budget.",
		Unit:        "percentunit",
		Min:         new(float64),
		Series:      []render.Series{spent, pace},
	}
	// The whole budget's line only when the data comes near it: a line at
	// 100% would flatten a few percent spent into the axis.
	if max(top, paceEnd) >= 0.5 {
		c.Thresholds = []render.Threshold{{Value: 1, Color: "red"}}
	}
	return c
}

// burnChart is the error ratio over the budget in each bucket, beside the
// tiers' factors, drawn as burn.
func burnChart(slo model.SLO, burn render.Series, buckets []Bucket) render.Chart {
	budget := slo.ErrorBudget().Float()
	for _, b := range buckets {
		burn.Points = append(burn.Points, render.Point{Time: b.From.Add(b.To.Sub(b.From) / 2), Value: b.ErrorRatio / budget})
	}
	c := render.Chart{
		Title:       "Burn rate and alert tiers",
		Description: "The error ratio over the error budget, averaged per bucket; the dashed lines are the tiers' burn factors (red page, orange ticket).",
		Min:         new(float64),
		Series:      []render.Series{burn},
	}
	seen := map[float64]bool{}
	for _, t := range slo.Alerting.Tiers {
		color := "orange"
		if t.Severity == model.PageTier {
			color = "red"
		}
		for _, w := range t.Windows {
			if f := w.Factor.Float(); !seen[f] {
				seen[f] = true
				c.Thresholds = append(c.Thresholds, render.Threshold{Value: f, Color: color})
			}
		}
	}
	return c
}
