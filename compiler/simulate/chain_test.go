package simulate

import (
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/kube"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/ruler"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// TestGroupsChainedForMimirFireWithinOneIntervalPerLinkOfTheWholeGroup
// holds the ruler files `compile --ruler mimir` writes to Mimir's default
// of 20 rules per group, and their alerts to the whole group's: each part
// is evaluated before the one it reads from (the latest a ruler ever reads
// it), and every alert fires and resolves no later than one evaluation
// interval per chain link after the whole group's, and no earlier; traffic
// stopping and returning pages nothing, though an alert reads its windows
// from several parts.
func TestGroupsChainedForMimirFireWithinOneIntervalPerLinkOfTheWholeGroup(t *testing.T) {
	t.Parallel()
	set := model.Set{SLOs: []model.SLO{slotest.VLLM(t, "errors", "99.9%")}}
	services, err := irules.Services(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	mimir, err := ruler.Lookup("mimir")
	if err != nil {
		t.Fatal(err)
	}
	files, err := kube.RulerGroups(services, kube.RulerOptions{Target: mimir, MaxRulesPerGroup: mimir.MaxRulesPerGroup})
	if err != nil {
		t.Fatal(err)
	}
	x, err := prom.IndexRules(files)
	if err != nil {
		t.Fatal(err)
	}
	groups := x.Groups()
	if len(groups) < 2 {
		t.Fatalf("the group of %d rules was not chained: %d groups", len(services[0].Groups[0].Rules), len(groups))
	}
	for _, g := range groups {
		if len(g.Rules) > mimir.MaxRulesPerGroup {
			t.Errorf("group %s holds %d rules, over Mimir's %d", g.Name, len(g.Rules), mimir.MaxRulesPerGroup)
		}
	}
	links, err := irules.Links(groups)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, l := range links {
		for _, n := range l {
			most = max(most, n)
		}
	}
	opts := Options{Scenarios: []string{ScenarioFastBurn, ScenarioSlowBurn, ScenarioZeroTraffic, ScenarioOutage}}
	whole, err := Run(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	chained, err := RunFiles(set, files, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := chained.Error(); err != nil {
		t.Fatalf("the chained groups fail a check: %v", err)
	}
	if len(whole.Checks) != len(chained.Checks) {
		t.Fatalf("%d checks on the whole group, %d chained", len(whole.Checks), len(chained.Checks))
	}
	slack := time.Duration(most) * time.Minute
	compared := 0
	for i, w := range whole.Checks {
		c := chained.Checks[i]
		for _, d := range []struct {
			what       string
			whole, got time.Duration
		}{{"fired", w.Delay, c.Delay}, {"resolved", w.Resolved, c.Resolved}} {
			if d.whole == 0 && d.got == 0 {
				continue
			}
			compared++
			if d.got < d.whole || d.got > d.whole+slack {
				t.Errorf("%s %s: %s after %s chained, %s whole (allowed up to %s later)", w.Scenario, w.Subject, d.what, d.got, d.whole, slack)
			}
		}
	}
	if compared == 0 {
		t.Fatal("no alert fired to compare")
	}
	t.Logf("%d groups, %d link(s), %d fire and resolve times compared", len(groups), most, compared)
}
