package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Chart is a time-series chart drawn outside the generated dashboards
// (the backtest report), with the same drawing as a dashboard panel.
type Chart struct {
	Title, Description string
	// Unit is a Grafana unit: percentunit, s, reqps, "" for plain numbers.
	Unit string
	// Min and Max pin the y axis' ends (values beyond are drawn at the
	// edge); nil fits it to the data.
	Min, Max *float64
	Series   []Series
	// Thresholds are drawn as dashed lines labelled with their value.
	Thresholds []Threshold
}

// Threshold is a horizontal line on a chart, in a Grafana colour name.
type Threshold struct {
	Value float64
	Color string
}

// Section is a heading, a sentence and charts side by side, each with
// the alerts given drawn as bands.
type Section struct {
	ID, Title, Note string
	Charts          []Chart
	Alerts          []Alert
	// From and To, when set, zoom the section's charts into a stretch of
	// the page's range.
	From, To time.Time
}

// Charts draws a page of sections over one time range, with the review
// page's look: a heading, a sentence on what the data is, a link to each
// section.
func Charts(title, intro string, from, to time.Time, sections []Section) ([]byte, error) {
	sp := span{from: from, to: to, ok: true}.widened()
	var b bytes.Buffer
	writeHead(&b, title, intro, sp)
	b.WriteString("<nav><ul>\n")
	for _, s := range sections {
		fmt.Fprintf(&b, "<li><a href=\"#%s\">%s</a></li>\n", esc("dashboard-"+s.ID), esc(s.Title))
	}
	b.WriteString("</ul></nav>\n</header>\n<main>\n")
	for _, s := range sections {
		if err := writeSection(&b, s, sp); err != nil {
			return nil, err
		}
	}
	b.WriteString("</main>\n</body>\n</html>\n")
	return b.Bytes(), nil
}

// writeSection draws a section's charts side by side as dashboard panels,
// over sp or the section's own From..To.
func writeSection(b *bytes.Buffer, s Section, sp span) error {
	d := dashboard{service: s.ID, Title: s.Title, note: s.Note}
	data := map[string][]Series{}
	w := 24 / max(1, len(s.Charts))
	for i, c := range s.Charts {
		p, err := chartPanel(c, i, w)
		if err != nil {
			return fmt.Errorf("chart %q: %w", c.Title, err)
		}
		d.Panels = append(d.Panels, p)
		data[p.Targets[0].Expr] = c.Series
	}
	if !s.From.IsZero() && s.To.After(s.From) {
		zoom := span{from: s.From, to: s.To, ok: true}
		writeDashboard(b, d, clipData(data, zoom), s.Alerts, zoom)
		return nil
	}
	writeDashboard(b, d, data, s.Alerts, sp)
	return nil
}

// AddSection draws a section of charts (see Charts) after the dashboards,
// over its own From..To, linked from the page's navigation.
func (r *Review) AddSection(s Section) error {
	var b bytes.Buffer
	if err := writeSection(&b, s, span{from: s.From, to: s.To, ok: !s.From.IsZero()}.widened()); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.extra = append(r.extra, drawnSection{id: s.ID, title: s.Title, html: b.Bytes()})
	return nil
}

// drawnSection is a section AddSection drew.
type drawnSection struct {
	id, title string
	html      []byte
}

// chartPanel describes a chart as the dashboard panel it is drawn as,
// through Grafana's JSON, so it takes exactly the panels' drawing path.
func chartPanel(c Chart, i, w int) (panel, error) {
	steps := []map[string]any{{"value": nil, "color": "green"}}
	for _, t := range c.Thresholds {
		steps = append(steps, map[string]any{"value": t.Value, "color": t.Color})
	}
	defaults := map[string]any{
		"unit":       c.Unit,
		"thresholds": map[string]any{"steps": steps},
		"custom":     map[string]any{"thresholdsStyle": map[string]any{"mode": "dashed"}},
	}
	if c.Min != nil {
		defaults["min"] = *c.Min
	}
	if c.Max != nil {
		defaults["max"] = *c.Max
	}
	raw, err := json.Marshal(map[string]any{
		"type": "timeseries", "id": i + 1, "title": c.Title, "description": c.Description,
		"gridPos":     map[string]int{"x": i * w, "y": 0, "w": w, "h": 9},
		"targets":     []map[string]string{{"expr": fmt.Sprintf("chart-%d", i), "refId": "A"}},
		"fieldConfig": map[string]any{"defaults": defaults},
	})
	if err != nil {
		return panel{}, err
	}
	var p panel
	err = json.Unmarshal(raw, &p)
	return p, err
}
