package grafana

import (
	"cmp"
	"encoding/json"
	"strings"
)

// Colours Grafana knows by name.
const (
	colorGreen  = "green"
	colorOrange = "orange"
	colorRed    = "red"
)

// promDS is the panels' data source: the dashboard's datasource variable.
func promDS() datasourceRef {
	return datasourceRef{Type: "prometheus", UID: "${datasource}"}
}

// query is one panel target; refIds are set when the panel is made.
func query(expr, legend string) target {
	return target{Datasource: promDS(), EditorMode: "code", Expr: expr, LegendFormat: legend, Range: true}
}

// refID names the i-th target: A..Z, then AA, AB, ...
func refID(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

func withRefIDs(ts []target) []target {
	out := make([]target, len(ts))
	for i, t := range ts {
		t.RefID = refID(i)
		out[i] = t
	}
	return out
}

// num is an exact JSON number taken from a decimal's text.
func num(s string) *json.Number {
	n := json.Number(s)
	return &n
}

// steps builds absolute thresholds: base colour first, then (value, colour)
// pairs in ascending order.
func steps(base string, marks ...step) *thresholds {
	return &thresholds{Mode: "absolute", Steps: append([]step{{Value: nil, Color: base}}, marks...)}
}

// seriesSpec says how a time-series panel draws.
type seriesSpec struct {
	unit       string
	min, max   *json.Number
	thresholds *thresholds
	// thresholdStyle is how thresholds are drawn: "line", "dashed" or "off".
	thresholdStyle string
	// stepped draws values as steps with a filled area (alert states).
	stepped bool
	noValue string
}

func timeseriesPanel(title, description string, targets []target, s seriesSpec) panel {
	style := s.thresholdStyle
	style = cmp.Or(style, "off")
	th := s.thresholds
	if th == nil {
		// Grafana fills in a default red step at 80 when thresholds are absent,
		// which would draw a meaningless line once a style is set.
		th = steps(colorGreen)
	}
	custom := &graphCustom{
		DrawStyle:         "line",
		LineInterpolation: "linear",
		LineWidth:         1,
		FillOpacity:       0,
		ShowPoints:        "never",
		SpanNulls:         false,
		ThresholdsStyle:   thresholdsStyle{Mode: style},
	}
	if s.stepped {
		custom.LineInterpolation = "stepAfter"
		custom.FillOpacity = 40
	}
	return panel{
		Type:        "timeseries",
		Title:       title,
		Description: description,
		Datasource:  ptr(promDS()),
		Targets:     withRefIDs(targets),
		FieldConfig: fieldConfig{
			Defaults: fieldDefaults{
				Unit:       s.unit,
				Min:        s.min,
				Max:        s.max,
				NoValue:    s.noValue,
				Thresholds: th,
				Color:      &fieldColor{Mode: "palette-classic"},
				Custom:     custom,
			},
			Overrides: []any{},
		},
		Options: timeseriesOptions{
			Legend:  legend{DisplayMode: "list", Placement: "bottom", ShowLegend: true, Calcs: []string{}},
			Tooltip: tooltip{Mode: "multi", Sort: "desc"},
		},
	}
}

// statPanel shows the last value of each target, coloured by thresholds.
func statPanel(title, description, unit string, targets []target, th *thresholds) panel {
	return panel{
		Type:        "stat",
		Title:       title,
		Description: description,
		Datasource:  ptr(promDS()),
		Targets:     withRefIDs(targets),
		FieldConfig: fieldConfig{
			Defaults: fieldDefaults{
				Unit:       unit,
				Thresholds: th,
				Color:      &fieldColor{Mode: "thresholds"},
			},
			Overrides: []any{},
		},
		Options: statOptions{
			GraphMode:              "area",
			ColorMode:              "value",
			JustifyMode:            "auto",
			TextMode:               "value_and_name",
			WideLayout:             true,
			ShowPercentChange:      false,
			ReduceOptions:          reduceOptions{Values: false, Calcs: []string{"lastNotNull"}, Fields: ""},
			PercentChangeColorMode: "standard",
			Orientation:            "auto",
		},
	}
}

// textPanel is a markdown panel; it reads no data.
func textPanel(title, description, markdown string) panel {
	return panel{
		Type:        "text",
		Title:       title,
		Description: description,
		FieldConfig: fieldConfig{Defaults: fieldDefaults{}, Overrides: []any{}},
		Options:     textOptions{Mode: "markdown", Content: markdown},
	}
}

func ptr[T any](v T) *T { return &v }

// mdText escapes prose from a spec for a markdown panel, so it shows as
// written: no links, images, HTML or headings of its own.
func mdText(s string) string { return mdEscape(s, "\\`*_{}[]<>#|~&!") }

// mdEscape escapes each of special in s with a backslash.
func mdEscape(s, special string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(special, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCell escapes text for a markdown table cell, on one line: as mdText
// but for ">", which starts nothing inside a cell (the tier math's
// "burn > 14.4" stays as written). Cells carry names from the spec and the
// catalog (an engine's title).
func mdCell(s string) string {
	return mdEscape(strings.ReplaceAll(s, "\n", " "), "\\`*_{}[]<#|~&!")
}
