package grafana

import (
	"fmt"
	"slices"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// overviewDashboard lists every SLO of the compilation with the budget it
// has left and how fast it burns now, so one screen says which service needs
// attention.
func overviewDashboard(set model.Set) (dashboard, error) {
	d := newDashboard(overviewUID, "SLOs: overview", []string{"inferslo", "slo"}, set.SLOs)
	// Every query covers all SLOs at once, selected by service: a panel
	// costs one query however many SLOs there are.
	matcher := serviceRegexMatcher(set.Services())
	d.Annotations.List = append(d.Annotations.List, alertAnnotation(matcher))

	var g grid
	g.add(textPanel("SLO catalog",
		"Every SLO compiled together, with its objective, window and alert tiers, so the numbers below can be read against them. "+
			"Each service has its own dashboard (top-right link) with latency, error ratio and burn-rate panels.",
		generatedHeader(set.SLOs)+"\n\n"+sloTable(set.SLOs, true)), gridWidth, 4+2*len(set.SLOs))

	g.row("Now")
	legend := overviewLegend(set.SLOs)
	budget := []target{query(budgetQuery(matcher), legend)}
	burn := []target{query(baseBurnQuery(matcher), legend)}
	g.add(budgetStatOf(budget), 12, 8)
	g.add(burnNowStat(burn), 12, 8)

	g.row("History")
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

// overviewLegend names a series by its SLO, its tier when some SLO names
// one, and by every group-by label any SLO splits its series by.
func overviewLegend(slos []model.SLO) string {
	legend := "{{" + rules.LabelSLO + "}}"
	if slices.ContainsFunc(slos, func(s model.SLO) bool { return s.SLOTier != "" }) {
		legend += " {{" + rules.LabelSLOTier + "}}"
	}
	seen := map[string]bool{}
	for _, s := range slos {
		for _, l := range s.GroupBy {
			if !seen[l] {
				seen[l] = true
				legend += " {{" + l + "}}"
			}
		}
	}
	return legend
}

// budgetQuery is the budget left of every SLO the matcher selects.
func budgetQuery(matcher string) string {
	return fmt.Sprintf("%s{%s}", rules.BudgetRemaining, matcher)
}

// baseBurnQuery is the burn rate of every SLO the matcher selects over its
// own base window, which differs between SLOs: the info series names each
// SLO's base window, and the burn rates keep only the window it names.
func baseBurnQuery(matcher string) string {
	return fmt.Sprintf(`%s{%s} and on (%s, %s) label_replace(%s{%s}, "%s", "$1", "%s", "(.+)")`,
		rules.BurnRate, matcher, rules.LabelSLO, rules.LabelWindow,
		rules.Info, matcher, rules.LabelWindow, rules.LabelBaseWindow)
}

// burnNowStat is the current burn rate of every SLO over its base window.
func burnNowStat(ts []target) panel {
	return statPanel("Burn rate now",
		"How many times faster than sustainable each SLO spends its error budget over its shortest alert window, from "+rules.BurnRate+". "+
			"Above 1 (orange) the budget would run out before the window ends if the rate held.",
		"none", ts, steps(colorGreen, step{Value: num("1"), Color: colorOrange}))
}
