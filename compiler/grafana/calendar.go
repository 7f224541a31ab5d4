package grafana

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// periodBudgetSeries is the budget left of a calendar-window SLO over time:
// it climbs back to full at every period boundary.
func periodBudgetSeries(slo model.SLO) panel {
	name := slo.Calendar.Name()
	return timeseriesPanel("Error budget remaining this "+name,
		fmt.Sprintf("Share of the %s error budget (%s of events may be bad) left in the current %s (%s), from %s, counted from the period's start. "+
			"It starts afresh at every boundary; the line at 0 is where the SLO breaks for this period.",
			slo.Name, percent(slo.ErrorBudget()), name, zoneText(*slo.Calendar), rules.BudgetRemaining),
		[]target{query(rules.Selector(rules.BudgetRemaining, slo, 0), "budget remaining")},
		seriesSpec{unit: "percentunit", thresholds: steps(colorRed, step{Value: num("0"), Color: colorGreen}), thresholdStyle: "line"})
}

// periodStats are the budget left this period and the days until it resets.
func periodStats(slo model.SLO) []panel {
	name := slo.Calendar.Name()
	budget := statPanel("Budget left this "+name,
		fmt.Sprintf("Share of the %s error budget still unspent in the current %s (%s), from %s.", slo.Name, name, zoneText(*slo.Calendar), rules.BudgetRemaining),
		"percentunit", []target{query(rules.Selector(rules.BudgetRemaining, slo, 0), "budget left")},
		steps(colorRed, step{Value: num("0"), Color: colorGreen}))
	left := statPanel("Days left this "+name,
		fmt.Sprintf("Days until the current %s ends and the budget of %s starts afresh, from %s.", name, slo.Name, rules.PeriodEnd),
		"d", []target{query(fmt.Sprintf("(%s - time()) / 86400", rules.Selector(rules.PeriodEnd, slo, 0)), "days left")},
		steps(colorGreen))
	return []panel{budget, left}
}

// zoneText is the zone and the UTC offset boundaries are drawn at.
func zoneText(c model.Calendar) string {
	sign, off := "+", c.Offset
	if off < 0 {
		sign, off = "-", -off
	}
	return fmt.Sprintf("%s, boundaries at UTC%s%02d:%02d", c.Zone, sign, off/3600, off%3600/60)
}
