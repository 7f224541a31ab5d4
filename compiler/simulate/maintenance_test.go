package simulate

import (
	"os"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

const maintenanceSpecs = `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: nightly}
spec:
  engine: vllm
  selector: {namespace: llm}
  window: 28d
  objectives: [{sli: errors, target: 99.9%}, {sli: ttft, threshold: 250ms, target: 99%}]
  alerting:
    maintenance:
      - {schedule: "30 6 * * *", duration: 90m, timeZone: "+05:30"}
---
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: weekly}
spec:
  engine: vllm
  selector: {namespace: llm}
  window: 28d
  objectives: [{sli: errors, target: 99%}]
  alerting:
    maintenance:
      - {schedule: "0 22 * * sat", duration: 1h, timeZone: Asia/Kolkata}
---
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: upgrade}
spec:
  engine: vllm
  tier: batch
  selector: {namespace: llm}
  objectives: [{sli: errors, target: 99.5%}]
  alerting:
    maintenance:
      - {start: "2026-01-01T02:00:00+01:00", end: "2026-01-01T02:45:00+01:00"}
`

// TestAMaintenanceHourOfTotalFailureSpendsNoBudgetAndPagesNoOne replays
// the maintenance scenario of a nightly window (where the spec puts it), a
// weekly one (replayed as a one-off window) and a one-off range of a batch
// SLO. Inside the window every request fails for an hour (or the window)
// and no burn alert fires, the budget left being the healthy traffic's;
// the same failure outside pages (the batch SLO's ticket fires). Rules
// compiled without the windows fail the same scenario. The nightly window
// and the one-off range open at 01:00 UTC (06:30 at +05:30, 02:00 at
// +01:00), the replay's first hour after the rate windows fill: a later
// hour only lengthens the healthy history before it, which both replays,
// inside and outside, evaluate minute by minute. The weekly window lasts
// the failing hour (the nightly one outlasts it, the one-off range is
// shorter): a longer one only moves the hour outside, and its replay's
// end, later. TestRulesWithoutTheMaintenanceWindowsFailTheScenario
// replays the same over rules compiled without the windows.
func TestAMaintenanceHourOfTotalFailureSpendsNoBudgetAndPagesNoOne(t *testing.T) {
	t.Parallel()
	set := slotest.Parse(t, maintenanceSpecs)
	files, err := irules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunFiles(set, files, Options{Scenarios: []string{ScenarioMaintenance}})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Error(); err != nil {
		t.Fatalf("the maintenance scenario fails: %v", err)
	}
	type tally struct{ silent, budget, fired int }
	got := map[string]*tally{}
	for _, c := range res.Checks {
		t.Logf("%s %s: %s -> %s", c.SLO, c.Subject, c.Expected, c.Observed)
		if got[c.SLO] == nil {
			got[c.SLO] = &tally{}
		}
		switch {
		case c.Subject == model.BudgetRemaining && c.Pass:
			got[c.SLO].budget++
		case strings.HasPrefix(c.Expected, "silent: ") && c.Observed == "silent":
			got[c.SLO].silent++
		case strings.HasPrefix(c.Expected, "fires: ") && strings.HasPrefix(c.Observed, "fired after "):
			got[c.SLO].fired++
		}
	}
	for _, slo := range set.SLOs {
		g := got[slo.Name]
		if g == nil || g.silent == 0 || g.budget != 1 || g.fired != 1 {
			t.Errorf("%s: %+v, want every burn alert silent inside, no budget spent, and an alert outside", slo.Name, g)
		}
	}
}

// TestRulesWithoutTheMaintenanceWindowsFailTheScenario replays the
// maintenance scenario of TestAMaintenanceHourOfTotalFailureSpendsNoBudgetAndPagesNoOne
// over rules that ignore the windows: they page inside them and spend the
// budget, for every SLO. The replays (about 10 CPU-s) run in CI's long
// simulate step (INFERSLO_LONG=1).
func TestRulesWithoutTheMaintenanceWindowsFailTheScenario(t *testing.T) {
	if os.Getenv("INFERSLO_LONG") == "" {
		t.Skip("replays the maintenance scenario over rules without the windows (about 10 CPU-s); INFERSLO_LONG=1 runs it (CI's long simulate step)")
	}
	t.Parallel()
	set := slotest.Parse(t, maintenanceSpecs)
	var plain model.Set
	for _, s := range set.SLOs {
		s.Alerting.Maintenance = nil
		plain.SLOs = append(plain.SLOs, s)
	}
	unmasked, err := irules.Build(plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunFiles(set, unmasked, Options{Scenarios: []string{ScenarioMaintenance}})
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, c := range res.Checks {
		if !c.Pass {
			failed[c.SLO] = true
		}
	}
	if len(failed) != len(set.SLOs) {
		t.Errorf("rules without the windows failed the scenario for %v, want every SLO", failed)
	}
}
