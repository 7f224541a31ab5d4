package grafana

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/templates"
)

// overviewDashboard lists every SLO of the compilation with the budget it
// has left and how fast it burns now, so one screen says which service needs
// attention.
func overviewDashboard(set model.Set, w *words, external []string) (dashboard, error) {
	d := newDashboard(overviewUID, "SLOs: overview", []string{"inferslo", "slo"}, set.SLOs)
	// Every query covers all SLOs at once, selected by service: a panel
	// costs one query however many SLOs there are.
	matcher := serviceRegexMatcher(set.Services())
	d.Annotations.List = append(d.Annotations.List, alertAnnotation(matcher, groupLabels(set.SLOs)))

	var g grid
	g.add(textPanel("SLO catalog", w.say(templates.PanelCatalog, templates.Panel{}),
		mdText(generatedHeader(set.SLOs))+"\n\n"+sloTable(set.SLOs, true, w.pairs)), gridWidth, 4+2*len(set.SLOs))

	g.row("Now")
	legend := overviewLegend(set.SLOs)
	budget := []target{query(budgetQuery(matcher), legend)}
	burn := []target{query(baseBurnQuery(matcher, external), legend)}
	g.add(budgetStatOf(w, budget), 12, 8)
	g.add(burnNowStat(w, burn), 12, 8)

	g.row("History")
	g.add(timeseriesPanel("Error budget remaining over time",
		w.say(templates.PanelOverviewBudgetHistory, templates.Panel{Metric: model.BudgetRemaining}),
		budget, seriesSpec{unit: "percentunit", thresholds: steps(colorRed, step{Value: num("0"), Color: colorGreen}), thresholdStyle: "line"}), 12, 8)
	g.add(timeseriesPanel("Burn rate over the shortest window",
		w.say(templates.PanelOverviewBurn, templates.Panel{Metric: model.ErrorRatio}),
		burn, seriesSpec{unit: "none", min: num("0"), thresholds: steps(colorGreen, step{Value: num("1"), Color: colorOrange}), thresholdStyle: "dashed"}), 12, 8)
	g.add(alertsPanel(w, matcher, groupLabels(set.SLOs), "SLO alerts firing"), gridWidth, 7)
	d.Panels = g.items
	return d, w.err
}

// overviewLegend names a series by its SLO, its tier when some SLO names
// one, and by every group-by label any SLO splits its series by.
func overviewLegend(slos []model.SLO) string {
	legend := "{{" + model.LabelSLO + "}}"
	if slices.ContainsFunc(slos, func(s model.SLO) bool { return s.SLOTier != "" }) {
		legend += " {{" + model.LabelSLOTier + "}}"
	}
	return legend + groupLegend(groupLabels(slos))
}

// budgetQuery is the budget left of every SLO the matcher selects.
func budgetQuery(matcher string) string {
	return fmt.Sprintf("%s{%s}", model.BudgetRemaining, matcher)
}

// baseBurnQuery is the burn rate of every SLO the matcher selects over its
// own base window, which differs between SLOs: each error ratio divided by
// its SLO's budget (1 - objective); the info series names each SLO's base
// window, and the ratios keep only the window it names. Only the ratios
// carry the matcher: the joins on slo and service keep the rest to the
// SLOs it selects, so the matcher, which lists every service, is parsed
// once per query, not three times. In a global view the joins hold the
// external labels too: each cluster's ratio meets its own objective.
func baseBurnQuery(matcher string, external []string) string {
	on := strings.Join(append([]string{model.LabelSLO, model.LabelService}, external...), ", ")
	return fmt.Sprintf(`%s{%s} / on (%s) group_left () (1 - %s) and on (%s, %s) label_replace(%s, "%s", "$1", "%s", "(.+)")`,
		model.ErrorRatio, matcher, on, model.Objective,
		on, model.LabelWindow,
		model.Info, model.LabelWindow, model.LabelBaseWindow)
}

// burnNowStat is the current burn rate of every SLO over its base window.
func burnNowStat(w *words, ts []target) panel {
	return statPanel("Burn rate now", w.say(templates.PanelBurnNow, templates.Panel{Metric: model.ErrorRatio}),
		"none", ts, steps(colorGreen, step{Value: num("1"), Color: colorOrange}))
}
