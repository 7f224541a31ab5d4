package grafana

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/kube/crdschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemas holds the Grafana JSON schemas copied into testdata/schemas
// (grafana-foundation-sdk v0.0.18).
type schemas struct {
	dashboard *jsonschema.Schema
	target    *jsonschema.Schema
	// options and fieldConfig are per panel type; fieldConfig only where the
	// plugin defines one.
	options     map[string]*jsonschema.Schema
	fieldConfig map[string]*jsonschema.Schema
}

func loadSchemas(t testing.TB) schemas {
	t.Helper()
	c, err := crdschema.Load(filepath.Join("testdata", "schemas", "*.jsonschema.json"), "mem://grafana/")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(loc string) *jsonschema.Schema {
		s, err := c.Compile("mem://grafana/" + loc)
		if err != nil {
			t.Fatalf("compile %s: %v", loc, err)
		}
		return s
	}
	s := schemas{
		dashboard:   compile("dashboard.jsonschema.json"),
		target:      compile("prometheus.jsonschema.json"),
		options:     map[string]*jsonschema.Schema{},
		fieldConfig: map[string]*jsonschema.Schema{},
	}
	for _, typ := range []string{"timeseries", "stat", "text", "table", "gauge", "bargauge"} {
		s.options[typ] = compile(typ + ".jsonschema.json#/definitions/Options")
	}
	for _, typ := range []string{"timeseries", "table"} {
		s.fieldConfig[typ] = compile(typ + ".jsonschema.json#/definitions/FieldConfig")
	}
	return s
}

// validate checks one dashboard file: the whole document, then every
// panel's options and custom field config against its plugin's schema, then
// every target against the Prometheus query schema. It returns every problem.
func (s schemas) validate(data []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	var errs []error
	if err := s.dashboard.Validate(doc); err != nil {
		errs = append(errs, fmt.Errorf("dashboard: %w", err))
	}
	panels, _ := doc.(map[string]any)["panels"].([]any)
	for i, p := range panels {
		pm, _ := p.(map[string]any)
		typ, _ := pm["type"].(string)
		if typ == "row" {
			continue
		}
		where := fmt.Sprintf("panel %d (%s %q)", i, typ, pm["title"])
		opts, ok := s.options[typ]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: no schema for panel type", where))
			continue
		}
		if err := opts.Validate(pm["options"]); err != nil {
			errs = append(errs, fmt.Errorf("%s options: %w", where, err))
		}
		if fc, ok := s.fieldConfig[typ]; ok {
			if custom := lookup(pm, "fieldConfig", "defaults", "custom"); custom != nil {
				if err := fc.Validate(custom); err != nil {
					errs = append(errs, fmt.Errorf("%s fieldConfig.defaults.custom: %w", where, err))
				}
			}
		}
		targets, _ := pm["targets"].([]any)
		for j, tg := range targets {
			if err := s.target.Validate(tg); err != nil {
				errs = append(errs, fmt.Errorf("%s target %d: %w", where, j, err))
			}
		}
	}
	return errors.Join(errs...)
}

// lookup walks nested JSON objects.
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestGeneratedDashboardsMatchGrafanaSchemas(t *testing.T) {
	s := loadSchemas(t)
	files, err := dashboards(fixtureSet(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := s.validate(f.Data); err != nil {
			t.Errorf("%s does not match the Grafana schemas:\n%v", f.Path, err)
		}
	}
}

// mutate decodes a dashboard, changes it and encodes it again.
func mutate(t *testing.T, data []byte, change func(d map[string]any)) []byte {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	change(d)
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// firstPanelOfType returns the first panel of a type in a decoded dashboard.
func firstPanelOfType(d map[string]any, typ string) map[string]any {
	for _, p := range d["panels"].([]any) {
		if pm := p.(map[string]any); pm["type"] == typ {
			return pm
		}
	}
	return nil
}

func TestSchemaCheckRejectsBrokenDashboards(t *testing.T) {
	s := loadSchemas(t)
	files, err := dashboards(fixtureSet(t))
	if err != nil {
		t.Fatal(err)
	}
	good := files[0].Data
	if err := s.validate(good); err != nil {
		t.Fatalf("the dashboard to break is not valid to begin with: %v", err)
	}
	tests := []struct {
		name   string
		change func(d map[string]any)
		want   string // part of the error
	}{
		{"a panel wider than the grid is rejected", func(d map[string]any) {
			firstPanelOfType(d, "timeseries")["gridPos"].(map[string]any)["w"] = 30
		}, "/gridPos/w"},
		{"an unknown top-level key is rejected", func(d map[string]any) {
			d["colour"] = "blue"
		}, "colour"},
		{"a missing schemaVersion is rejected", func(d map[string]any) {
			delete(d, "schemaVersion")
		}, "schemaVersion"},
		{"a stat panel with an empty orientation is rejected", func(d map[string]any) {
			firstPanelOfType(d, "stat")["options"].(map[string]any)["orientation"] = ""
		}, "orientation"},
		{"a time series without tooltip options is rejected", func(d map[string]any) {
			delete(firstPanelOfType(d, "timeseries")["options"].(map[string]any), "tooltip")
		}, "tooltip"},
		{"an unknown threshold style is rejected", func(d map[string]any) {
			lookup(firstPanelOfType(d, "timeseries"), "fieldConfig", "defaults", "custom").(map[string]any)["thresholdsStyle"] = map[string]any{"mode": "wavy"}
		}, "thresholdsStyle"},
		{"a target without expr is rejected", func(d map[string]any) {
			delete(firstPanelOfType(d, "timeseries")["targets"].([]any)[0].(map[string]any), "expr")
		}, "expr"},
		{"a threshold step without colour is rejected", func(d map[string]any) {
			th := lookup(firstPanelOfType(d, "timeseries"), "fieldConfig", "defaults", "thresholds").(map[string]any)
			delete(th["steps"].([]any)[0].(map[string]any), "color")
		}, "color"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.validate(mutate(t, good, tt.change))
			if err == nil {
				t.Fatal("the broken dashboard passed the schema check")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error does not mention %q:\n%v", tt.want, err)
			}
		})
	}
}

func TestSchemaCopiesNameTheirSourceAndCarryNoDescriptions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "schemas", "*.jsonschema.json"))
	if len(files) < 5 {
		t.Fatalf("expected the Grafana schemas in testdata/schemas, found %d", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		c, _ := doc["$comment"].(string)
		if !strings.Contains(c, "grafana-foundation-sdk") || !strings.Contains(c, "v0.0.18") {
			t.Errorf("%s: $comment %q does not name the source and version", f, c)
		}
		if n := countDescriptions(doc, false); n > 0 {
			t.Errorf("%s still has %d description annotations", f, n)
		}
	}
}

// countDescriptions counts "description" keywords (string values), not
// properties that happen to be called description.
func countDescriptions(v any, inProperties bool) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if _, isString := c.(string); k == "description" && isString && !inProperties {
				n++
			}
			n += countDescriptions(c, !inProperties && (k == "properties" || k == "definitions"))
		}
	case []any:
		for _, c := range x {
			n += countDescriptions(c, false)
		}
	}
	return n
}

// TestExampleDashboardsMatchGrafanaSchemas validates the dashboards compiled
// from the bundled examples (the golden files the compiler test keeps
// current), with every panel kind the examples produce.
func TestExampleDashboardsMatchGrafanaSchemas(t *testing.T) {
	files, err := filepath.Glob("../../testdata/golden/examples/grafana/*.json")
	if err != nil || len(files) < 8 {
		t.Fatalf("want the 7 example dashboards and the overview, found %v (%v)", files, err)
	}
	s := loadSchemas(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.validate(data); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
