package realcode

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"
)

// unitTests is the part of a promtool test file this test reads: each
// test's alert expectations, which promtool holds complete per alert name
// and evaluation time.
type unitTests struct {
	Tests []struct {
		Name       string `yaml:"name"`
		AlertTests []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []struct {
				Labels map[string]string `yaml:"exp_labels"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// One incident reaches people once: in every generated promtool test of a
// burn that pages (promtool proves which burn alerts fire then, of every
// SLO of the service: a vLLM rejection storm fires the rejections SLO's page
// and ticket and nothing of its errors SLO), the burn alerts firing at the
// page's evaluation time go through Alertmanager's inhibitor with the
// generated inhibit rules, and exactly one alert is left to notify: the
// page of the SLO the test burns (of a goodput SLO's burn, the pages of the
// TTFT and TPOT SLOs whose misses it adds, and not its own).
func TestAlertmanagerLeavesOnePagePerIncident(t *testing.T) {
	out := compiled(t)
	inhibitFile := read(t, filepath.Join(out, "alertmanager", "inhibit.yaml"))
	ctx := context.Background()
	cases := 0
	for _, f := range files(t, out, "prometheus/*.test.yaml") {
		var ut unitTests
		if err := yaml.Unmarshal(read(t, f), &ut); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range ut.Tests {
			slo, what, _ := strings.Cut(tc.Name, ": ")
			if !strings.HasPrefix(what, "the page alert fires during") {
				continue
			}
			firing := map[string][]model.LabelSet{}
			for _, at := range tc.AlertTests {
				if at.Alertname != "ErrorBudgetBurn" {
					continue
				}
				for _, a := range at.ExpAlerts {
					ls := model.LabelSet{model.AlertNameLabel: model.LabelValue(at.Alertname)}
					for k, v := range a.Labels {
						ls[model.LabelName(k)] = model.LabelValue(v)
					}
					firing[at.EvalTime] = append(firing[at.EvalTime], ls)
				}
			}
			for evalTime, alerts := range firing {
				cases++
				ih := inhibitor(t, inhibitFile, alerts...)
				// The page of the SLO burned; a goodput burn is its TTFT
				// and TPOT SLOs' misses, which page as their causes.
				want := []string{slo}
				for _, a := range alerts {
					if a["slo"] == model.LabelValue(slo) && a["sli"] == "goodput" {
						want = nil
						for _, c := range alerts {
							if (c["sli"] == "ttft" || c["sli"] == "tpot") && c["service"] == a["service"] && c["burn_tier"] == "page" {
								want = append(want, string(c["slo"]))
							}
						}
						break
					}
				}
				var notified, paged []string
				for _, a := range alerts {
					if !ih.Mutes(ctx, a) {
						notified = append(notified, a.String())
						if a["burn_tier"] == "page" {
							paged = append(paged, string(a["slo"]))
						}
					}
				}
				sort.Strings(notified)
				sort.Strings(paged)
				sort.Strings(want)
				if len(want) == 0 || len(notified) != len(want) || !slices.Equal(paged, want) {
					t.Errorf("%s, %q at %s: %d alerts fire and Alertmanager notifies %v; want the pages of %v alone", filepath.Base(f), tc.Name, evalTime, len(alerts), notified, want)
				}
			}
		}
	}
	if cases == 0 {
		t.Fatal("no promtool test of a page among the compiled examples")
	}
	t.Logf("alertmanager v0.34.0 inhibitor: %d paging burns of the examples' promtool tests each notify their own page alone", cases)
}
