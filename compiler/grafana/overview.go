package grafana

import (
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// overviewDashboard lists every SLO of the compilation with the budget it
// has left and how fast it burns now, so one screen says which service needs
// attention.
func overviewDashboard(set model.Set) (dashboard, error) {
	d := newDashboard(overviewUID, "SLOs: overview", []string{"inferslo", "slo"}, set.SLOs)
	matcher := sloRegexMatcher(set.SLOs)
	d.Annotations.List = append(d.Annotations.List, alertAnnotation(matcher))

	var g grid
	g.add(textPanel("SLO catalog",
		"Every SLO compiled together, with its objective, window and alert tiers, so the numbers below can be read against them. "+
			"Each service has its own dashboard (top-right link) with latency, error ratio and burn-rate panels.",
		generatedHeader(set.SLOs)+"\n\n"+sloTable(set.SLOs, true)), gridWidth, 4+2*len(set.SLOs))

	g.row("Now")
	g.add(budgetStat(set.SLOs, false), 12, 8)
	g.add(burnNowStat(set.SLOs), 12, 8)

	g.row("History")
	var budget, burn []target
	for _, s := range set.SLOs {
		budget = append(budget, query(rules.Selector(rules.BudgetRemaining, s, 0), seriesLegend(s, s.Name)))
		burn = append(burn, query(rules.Selector(rules.BurnRate, s, s.BaseWindow()), seriesLegend(s, s.Name)))
	}
	g.add(timeseriesPanel("Error budget remaining over time",
		"Share of each SLO's error budget left over its window, from "+rules.BudgetRemaining+". "+
			"Steep drops mark incidents; a slow steady slide means the objective is tighter than what the service delivers.",
		budget, seriesSpec{unit: "percentunit", thresholds: steps(colorRed, step{Value: num("0"), Color: colorGreen}), thresholdStyle: "line"}), 12, 8)
	g.add(timeseriesPanel("Burn rate over the shortest window",
		"Burn rate of each SLO over its base (shortest alert) window, from "+rules.BurnRate+". "+
			"Above the dashed line at 1 the SLO spends budget faster than its window allows; alert tiers use higher factors, shown per service.",
		burn, seriesSpec{unit: "none", min: num("0"), thresholds: steps(colorGreen, step{Value: num("1"), Color: colorOrange}), thresholdStyle: "dashed"}), 12, 8)
	g.add(alertsPanel(matcher, "SLO alerts firing"), gridWidth, 7)
	d.Panels = g.items
	return d, nil
}

// burnNowStat is the current burn rate of every SLO over its base window.
func burnNowStat(slos []model.SLO) panel {
	var ts []target
	for _, s := range slos {
		ts = append(ts, query(rules.Selector(rules.BurnRate, s, s.BaseWindow()), seriesLegend(s, s.Name)))
	}
	return statPanel("Burn rate now",
		"How many times faster than sustainable each SLO spends its error budget over its shortest alert window, from "+rules.BurnRate+". "+
			"Above 1 (orange) the budget would run out before the window ends if the rate held.",
		"none", ts, steps(colorGreen, step{Value: num("1"), Color: colorOrange}))
}
