package grafana

import "encoding/json"

// The types below are the subset of Grafana's classic dashboard JSON model
// (schemaVersion 42) that inferslo emits. Field order is the output order, so
// generated files diff cleanly.

type dashboard struct {
	UID           string      `json:"uid"`
	Title         string      `json:"title"`
	Description   string      `json:"description"`
	Tags          []string    `json:"tags"`
	Timezone      string      `json:"timezone"`
	Editable      bool        `json:"editable"`
	GraphTooltip  int         `json:"graphTooltip"`
	Time          timeRange   `json:"time"`
	Refresh       string      `json:"refresh"`
	SchemaVersion int         `json:"schemaVersion"`
	Links         []link      `json:"links"`
	Templating    templating  `json:"templating"`
	Annotations   annotations `json:"annotations"`
	Panels        []any       `json:"panels"`
}

type timeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type link struct {
	Title       string   `json:"title"`
	Type        string   `json:"type"`
	Icon        string   `json:"icon"`
	Tooltip     string   `json:"tooltip"`
	Tags        []string `json:"tags"`
	AsDropdown  bool     `json:"asDropdown"`
	TargetBlank bool     `json:"targetBlank"`
	IncludeVars bool     `json:"includeVars"`
	KeepTime    bool     `json:"keepTime"`
}

type templating struct {
	List []variable `json:"list"`
}

type variable struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Label       string         `json:"label"`
	Description string         `json:"description,omitempty"`
	Query       string         `json:"query"`
	Datasource  *datasourceRef `json:"datasource,omitempty"`
	Definition  string         `json:"definition,omitempty"`
	Regex       string         `json:"regex,omitempty"`
	Current     *option        `json:"current,omitempty"`
	Refresh     int            `json:"refresh"`
	Multi       bool           `json:"multi"`
	IncludeAll  bool           `json:"includeAll"`
	AllValue    string         `json:"allValue,omitempty"`
	Sort        int            `json:"sort"`
	Hide        int            `json:"hide"`
}

type option struct {
	Text  string `json:"text"`
	Value string `json:"value"`
}

type annotations struct {
	List []annotation `json:"list"`
}

type annotation struct {
	Name        string        `json:"name"`
	Datasource  datasourceRef `json:"datasource"`
	Enable      bool          `json:"enable"`
	Hide        bool          `json:"hide"`
	IconColor   string        `json:"iconColor"`
	BuiltIn     int           `json:"builtIn,omitempty"`
	Type        string        `json:"type,omitempty"`
	Expr        string        `json:"expr,omitempty"`
	Step        string        `json:"step,omitempty"`
	TitleFormat string        `json:"titleFormat,omitempty"`
	TextFormat  string        `json:"textFormat,omitempty"`
	TagKeys     string        `json:"tagKeys,omitempty"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type gridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// row is an expanded row header; in the classic model the panels below an
// expanded row sit at the top level and its own panel list stays empty.
type row struct {
	Type      string  `json:"type"`
	ID        int     `json:"id"`
	Title     string  `json:"title"`
	Collapsed bool    `json:"collapsed"`
	GridPos   gridPos `json:"gridPos"`
	Panels    []panel `json:"panels"`
}

type panel struct {
	Type        string         `json:"type"`
	ID          int            `json:"id"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Datasource  *datasourceRef `json:"datasource,omitempty"`
	GridPos     gridPos        `json:"gridPos"`
	Targets     []target       `json:"targets,omitempty"`
	FieldConfig fieldConfig    `json:"fieldConfig"`
	Options     any            `json:"options"`
}

type target struct {
	Datasource   datasourceRef `json:"datasource"`
	EditorMode   string        `json:"editorMode"`
	Expr         string        `json:"expr"`
	Instant      bool          `json:"instant"`
	LegendFormat string        `json:"legendFormat"`
	Range        bool          `json:"range"`
	RefID        string        `json:"refId"`
}

type fieldConfig struct {
	Defaults  fieldDefaults `json:"defaults"`
	Overrides []any         `json:"overrides"`
}

type fieldDefaults struct {
	Unit       string       `json:"unit,omitempty"`
	Decimals   *int         `json:"decimals,omitempty"`
	Min        *json.Number `json:"min,omitempty"`
	Max        *json.Number `json:"max,omitempty"`
	NoValue    string       `json:"noValue,omitempty"`
	Thresholds *thresholds  `json:"thresholds,omitempty"`
	Color      *fieldColor  `json:"color,omitempty"`
	Custom     *graphCustom `json:"custom,omitempty"`
}

type thresholds struct {
	Mode  string `json:"mode"`
	Steps []step `json:"steps"`
}

// step is a threshold step; a nil Value is Grafana's "base" (minus infinity).
type step struct {
	Value *json.Number `json:"value"`
	Color string       `json:"color"`
}

type fieldColor struct {
	Mode string `json:"mode"`
}

// graphCustom is the time-series panel's field config (GraphFieldConfig).
type graphCustom struct {
	DrawStyle         string          `json:"drawStyle"`
	LineInterpolation string          `json:"lineInterpolation"`
	LineWidth         int             `json:"lineWidth"`
	FillOpacity       int             `json:"fillOpacity"`
	ShowPoints        string          `json:"showPoints"`
	SpanNulls         bool            `json:"spanNulls"`
	ThresholdsStyle   thresholdsStyle `json:"thresholdsStyle"`
}

type thresholdsStyle struct {
	Mode string `json:"mode"`
}

type timeseriesOptions struct {
	Legend  legend  `json:"legend"`
	Tooltip tooltip `json:"tooltip"`
}

type legend struct {
	DisplayMode string   `json:"displayMode"`
	Placement   string   `json:"placement"`
	ShowLegend  bool     `json:"showLegend"`
	Calcs       []string `json:"calcs"`
}

type tooltip struct {
	Mode string `json:"mode"`
	Sort string `json:"sort"`
}

type statOptions struct {
	GraphMode              string        `json:"graphMode"`
	ColorMode              string        `json:"colorMode"`
	JustifyMode            string        `json:"justifyMode"`
	TextMode               string        `json:"textMode"`
	WideLayout             bool          `json:"wideLayout"`
	ShowPercentChange      bool          `json:"showPercentChange"`
	ReduceOptions          reduceOptions `json:"reduceOptions"`
	PercentChangeColorMode string        `json:"percentChangeColorMode"`
	Orientation            string        `json:"orientation"`
}

type reduceOptions struct {
	Values bool     `json:"values"`
	Calcs  []string `json:"calcs"`
	Fields string   `json:"fields"`
}

type textOptions struct {
	Mode    string `json:"mode"`
	Content string `json:"content"`
}
