package grafana

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/templates"
)

// periodBudgetSeries is the budget left of a calendar-window SLO over time:
// it climbs back to full at every period boundary.
func periodBudgetSeries(w *words, slo model.SLO) panel {
	name := slo.Calendar.Name()
	return timeseriesPanel("Error budget remaining this "+name,
		w.say(templates.PanelBudgetPeriod, w.sloData(slo, model.BudgetRemaining)),
		[]target{query(model.BudgetQuery(slo), "budget remaining")},
		seriesSpec{unit: "percentunit", thresholds: steps(colorRed, step{Value: num("0"), Color: colorGreen}), thresholdStyle: "line"})
}

// periodStats are the budget left this period and the days until it resets.
func periodStats(w *words, slo model.SLO) []panel {
	name := slo.Calendar.Name()
	budget := statPanel("Budget left this "+name,
		w.say(templates.PanelBudgetLeftPeriod, w.sloData(slo, model.BudgetRemaining)),
		"percentunit", []target{query(model.BudgetQuery(slo), "budget left")},
		steps(colorRed, step{Value: num("0"), Color: colorGreen}))
	left := statPanel("Days left this "+name,
		w.say(templates.PanelDaysLeft, w.sloData(slo, model.PeriodEnd)),
		"d", []target{query(fmt.Sprintf("(%s - time()) / 86400", model.Selector(model.PeriodEnd, slo, 0)), "days left")},
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
