package grafana

import (
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/templates"
)

// goodputPanels draw goodput's lower and upper bounds of each TTFT and TPOT
// SLO pair of the service, over the base and the SLO window.
func goodputPanels(w *words, slos []model.SLO) []panel {
	var out []panel
	for _, p := range model.GoodputPairs(slos) {
		// The pair's series carry its name as slo and the TTFT SLO's groups.
		pair := p.TTFT
		pair.Name = p.Name()
		var ts []target
		for _, win := range p.Windows() {
			ts = append(ts,
				query(recorded(model.GoodputLower, pair, win, true), seriesLegend(pair, "lower bound over "+dur(win))),
				query(recorded(model.GoodputUpper, pair, win, true), seriesLegend(pair, "upper bound over "+dur(win))))
		}
		data := w.sloData(pair, model.GoodputLower+", "+model.GoodputUpper)
		data.SLI = "ttft and tpot"
		out = append(out, timeseriesPanel("Goodput bounds: "+p.TTFT.Name+" and "+p.TPOT.Name, w.say(templates.PanelGoodput, data), ts,
			seriesSpec{unit: "percentunit", min: num("0"), max: num("1")}))
	}
	return out
}
