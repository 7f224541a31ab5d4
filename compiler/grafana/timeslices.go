package grafana

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler/model"
)

// sliceValuePanel is a time-slice SLO's SLI per slice against what makes a
// slice good: the threshold query's value, or the slice's share of good
// events.
func sliceValuePanel(slo model.SLO) panel {
	ts := slo.Timeslices
	slice := dur(ts.Window)
	t := []target{query(recorded(model.SliceValue, slo, ts.Window, true), seriesLegend(slo, "SLI per "+slice+" slice"))}
	th := slo.SLI.Threshold
	if th != nil && ts.Evaluation == 0 {
		// Red on the side of the threshold where a slice is bad.
		marks := steps(colorGreen, step{Value: num(th.Value.String()), Color: colorRed})
		if th.Op == ">=" || th.Op == ">" {
			marks = steps(colorRed, step{Value: num(th.Value.String()), Color: colorGreen})
		}
		return timeseriesPanel("SLI per "+slice+" slice",
			fmt.Sprintf("The value of %s's threshold query over each %s slice, from %s; a slice is good when it is %s %s (the line). "+
				"A slice without traffic has no value and counts neither way.", slo.Name, slice, model.SliceValue, th.Op, th.Value),
			t, seriesSpec{unit: "none", thresholds: marks, thresholdStyle: "line"})
	}
	desc := fmt.Sprintf("Share of good events in each %s slice of %s, from %s. ", slice, slo.Name, model.SliceValue)
	title := "Good events per " + slice + " slice"
	if th != nil {
		desc = fmt.Sprintf("Share of the evaluations in each %s slice of %s (one every %s) whose threshold query is %s %s, from %s; evaluations without traffic are left out. ",
			slice, slo.Name, dur(ts.Evaluation), th.Op, th.Value, model.SliceValue)
		title = "Good evaluations per " + slice + " slice"
	}
	marks := steps(colorGreen)
	if ts.Average {
		desc += "The SLO averages these shares over its window; a slice without traffic counts neither way."
	} else {
		desc += fmt.Sprintf("A slice is good when its share is at least %s (the line); a slice without traffic counts neither way.", percent(ts.Target))
		marks = steps(colorRed, step{Value: num(ts.Target.String()), Color: colorGreen})
	}
	return timeseriesPanel(title, desc, t,
		seriesSpec{unit: "percentunit", max: num("1"), thresholds: marks, thresholdStyle: "line"})
}

// goodSlicesPanel is the share of good slices (or the mean slice success)
// over the page tier's first long window and the SLO window, against the
// objective.
func goodSlicesPanel(slo model.SLO) panel {
	title, what := "Good slices", "share of good "+dur(slo.Timeslices.Window)+" slices"
	if slo.Timeslices.Average {
		title, what = "Mean slice success", "mean share of good events per "+dur(slo.Timeslices.Window)+" slice"
	}
	windows := []model.WindowPair{}
	if len(slo.Alerting.Tiers) > 0 {
		windows = slo.Alerting.Tiers[0].Windows[:1]
	}
	var ts []target
	for _, p := range windows {
		ts = append(ts, query("1 - "+recorded(model.ErrorRatio, slo, p.Long, true), seriesLegend(slo, "over "+dur(p.Long))))
	}
	ts = append(ts, query("1 - "+recorded(model.ErrorRatio, slo, slo.Window, true), seriesLegend(slo, "over "+dur(slo.Window))))
	return timeseriesPanel(title,
		fmt.Sprintf("The %s of %s, from 1 - %s: held below the objective %s (the line) for the whole %s window, the SLO breaks. "+
			"Slices without traffic are left out.", what, slo.Name, model.ErrorRatio, percent(slo.Objective), dur(slo.Window)),
		ts, seriesSpec{unit: "percentunit", max: num("1"), thresholds: steps(colorRed, step{Value: num(slo.Objective.String()), Color: colorGreen}), thresholdStyle: "line"})
}
