package render

import (
	"bytes"
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// incidentPanelsPerRow lays the zoomed panels out three abreast.
const incidentPanelsPerRow = 3

// incidentSpan is the stretch of the dashboard's first page to zoom into:
// from an hour before it fired, when the burn was building, to half an
// hour after it resolved, within the data. Over a day of data the page
// is a few pixels wide; zoomed it fills the chart.
func incidentSpan(alerts []Alert, own span) (Alert, span, bool) {
	var first *Alert
	for i, a := range alerts {
		if a.Severity == model.PageTier && a.Name != "" && (first == nil || a.From.Before(first.From)) {
			first = &alerts[i]
		}
	}
	if first == nil || !own.ok {
		return Alert{}, span{}, false
	}
	sp := span{from: Later(first.From.Add(-time.Hour), own.from), to: Earlier(first.To.Add(30*time.Minute), own.to), ok: true}
	if !sp.to.After(sp.from) || sp.to.Sub(sp.from) >= own.to.Sub(own.from) {
		return Alert{}, span{}, false
	}
	return *first, sp, true
}

// writeIncident draws the dashboard's panels that carry SLO thresholds
// (budget, error ratio, burn rate, latency) over the zoomed span of its
// first page, with every alert band that falls in it. It writes nothing
// when no page fired.
func writeIncident(b *bytes.Buffer, d dashboard, data map[string][]Series, alerts []Alert, own span) {
	first, sp, ok := incidentSpan(alerts, own)
	if !ok {
		return
	}
	z := dashboard{
		Title: fmt.Sprintf("Incident: %s %s on %s, zoomed", first.Name, first.Severity, first.SLO),
		note: fmt.Sprintf("The first page of this dashboard fired %s and resolved %s; the charts show %s to %s, the hour before it fired to half an hour after.",
			first.From.UTC().Format("Jan 2 15:04"), first.To.UTC().Format("Jan 2 15:04"),
			sp.from.UTC().Format("Jan 2 15:04"), sp.to.UTC().Format("Jan 2 15:04")),
		service: "incident-" + d.service,
	}
	if d.service == "" {
		z.service = "incident-overview"
	}
	// Each panel keeps the row heading it sits under, so the zoomed
	// charts say which SLO they belong to.
	var row *panel
	x, y, w := 0, 0, 24/incidentPanelsPerRow
	drawn := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			row = &p
			continue
		}
		if p.Type != "timeseries" || p.thresholdStyle() == "" {
			continue
		}
		if row != nil || x+w > 24 {
			if x > 0 {
				x, y = 0, y+8
			}
		}
		if row != nil {
			h := *row
			h.GridPos = gridPos{W: 24, H: 1, Y: y}
			z.Panels = append(z.Panels, h)
			row, y = nil, y+1
		}
		p.GridPos = gridPos{W: w, H: 8, X: x, Y: y}
		z.Panels = append(z.Panels, p)
		x += w
		drawn++
	}
	if drawn == 0 {
		return
	}
	writeDashboard(b, z, clipData(data, sp), alerts, sp)
}

// clipData keeps the points within sp, so no line is drawn past the axes.
func clipData(data map[string][]Series, sp span) map[string][]Series {
	out := make(map[string][]Series, len(data))
	for q, ss := range data {
		for _, s := range ss {
			var pts []Point
			for _, p := range s.Points {
				if !p.Time.Before(sp.from) && !p.Time.After(sp.to) {
					pts = append(pts, p)
				}
			}
			s.Points = pts
			out[q] = append(out[q], s)
		}
	}
	return out
}
