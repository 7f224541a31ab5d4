package realcode

import (
	"path/filepath"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// strictDashboard decodes a dashboard as Grafana's foundation SDK does in
// strict mode: unknown fields, wrong types and missing required fields fail,
// in panels' options and field config and in the Prometheus targets too
// (the SDK's panel and query plugins are registered).
func strictDashboard(data []byte) error {
	plugins.RegisterDefaultPlugins()
	var d dashboard.Dashboard
	err := d.UnmarshalJSONStrict(data)
	// The SDK returns its error list typed even when it is empty.
	if be, ok := err.(cog.BuildErrors); ok && len(be) == 0 {
		return nil
	}
	return err
}

func TestGrafanaSDKReadsEveryDashboardStrictly(t *testing.T) {
	out := compiled(t)
	dashboards := files(t, out, "grafana/*.json")
	for _, f := range dashboards {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if err := strictDashboard(read(t, f)); err != nil {
				t.Fatal(err)
			}
		})
	}
	if !t.Failed() {
		t.Logf("grafana-foundation-sdk v0.0.22: %d dashboards decode strictly", len(dashboards))
	}
}

func TestGrafanaSDKRejectsABrokenDashboard(t *testing.T) {
	out := compiled(t)
	data := read(t, filepath.Join(out, "grafana", "chat.json"))
	broken := map[string][]byte{
		"an unknown dashboard field": mutate(t, data, `"schemaVersion":`, `"schemaVersions": 1, "schemaVersion":`),
		"a field of the wrong type":  mutate(t, data, `"refresh": "1m"`, `"refresh": 60`),
		"an unknown target field":    mutate(t, data, `"expr": `, `"exprs": "up", "expr": `),
	}
	for name, doc := range broken {
		if strictDashboard(doc) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
