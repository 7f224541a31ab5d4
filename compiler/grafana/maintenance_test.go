package grafana

import (
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// A service whose SLO has maintenance windows shades them with an
// annotation reading the recording the rules write; services without
// windows get no such annotation.
func TestTheDashboardOfAServiceWithMaintenanceShadesItsWindows(t *testing.T) {
	set := fixtureSet(t)
	set.SLOs[0].Alerting.Maintenance = []model.Maintenance{{Minute: 120, Duration: time.Hour}}
	maintained := set.SLOs[0]
	recorded, _ := recordedByRules(t, set)
	if !recorded[seriesRef{model.MaintenanceActive, maintained.Name, ""}] {
		t.Fatalf("the rules do not record %s for %s", model.MaintenanceActive, maintained.Name)
	}
	found := 0
	for p, data := range build(t, set) {
		var exprs []string
		for _, a := range decode(t, data)["annotations"].(map[string]any)["list"].([]any) {
			a := a.(map[string]any)
			if a["name"] == "Planned maintenance" {
				exprs = append(exprs, a["expr"].(string))
			}
		}
		want := p == "grafana/"+maintained.Service.Name+".json"
		if want != (len(exprs) == 1) {
			t.Errorf("%s: %d maintenance annotations, want %v", p, len(exprs), want)
			continue
		}
		for _, q := range exprs {
			found++
			reads := recordedReads(t, q)
			if len(reads) != 1 || reads[0].name != model.MaintenanceActive || !strings.Contains(q, model.LabelService+`="`+maintained.Service.Name+`"`) {
				t.Errorf("%s: %q does not read the service's maintenance recording", p, q)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d dashboards shade maintenance, want 1", found)
	}
}
