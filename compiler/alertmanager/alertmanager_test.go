package alertmanager

import (
	"fmt"
	"strings"
	"testing"

	amconfig "github.com/prometheus/alertmanager/config"
	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	prommodel "github.com/prometheus/common/model"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

func load(t *testing.T, doc string) model.Set {
	t.Helper()
	res, err := spec.Parse(spec.Source{Name: "fleet.yaml", Data: []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res.Set
}

const grouped = `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fleet}
spec:
  engine: vllm
  groupBy: [model_name]
  window: 28d
  objectives: [{sli: errors, target: 99.9%}]
  alerting:
    labels: {team: llm-serving}
    severities: {page: critical, ticket: warning}
`

func TestTheSnippetMutesTheTicketOfTheSameGroupWhileItsPageFires(t *testing.T) {
	files, err := Backend{}.Build(load(t, grouped))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != Path {
		t.Fatalf("files: %v", files)
	}
	cfg, err := amconfig.Load("route: {receiver: r}\nreceivers: [{name: r}]\n" + string(files[0].Data))
	if err != nil {
		t.Fatalf("Alertmanager rejects the snippet: %v", err)
	}
	if len(cfg.InhibitRules) != 2 {
		t.Fatalf("%d inhibit rules, want the page's and the outage tier's", len(cfg.InhibitRules))
	}
	r := cfg.InhibitRules[0]
	if got := fmt.Sprint(r.SourceMatchers); !strings.Contains(got, `burn_tier="page"`) || !strings.Contains(got, `alertname="ErrorBudgetBurn"`) {
		t.Errorf("source matchers %s", got)
	}
	if got := fmt.Sprint(r.TargetMatchers); !strings.Contains(got, `burn_tier="ticket"`) {
		t.Errorf("target matchers %s", got)
	}
	var equal []string
	for _, l := range r.Equal {
		equal = append(equal, string(l))
	}
	if want := "slo,cluster,env,environment,model_name,region,team"; strings.Join(equal, ",") != want {
		t.Errorf("equal = %v, want %s: a page on one model, team, environment or cluster must not mute another's ticket", equal, want)
	}
}

func TestAPageInOneEnvironmentOrClusterNeverMutesAnother(t *testing.T) {
	files, err := Backend{ExternalLabels: []string{"datacenter"}}.Build(load(t, grouped))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := amconfig.Load("route: {receiver: r}\nreceivers: [{name: r}]\n" + string(files[0].Data))
	if err != nil {
		t.Fatalf("Alertmanager rejects the snippet: %v", err)
	}
	with := func(ls prommodel.LabelSet, k, v string) prommodel.LabelSet {
		c := ls.Clone()
		c[prommodel.LabelName(k)] = prommodel.LabelValue(v)
		return c
	}
	for _, c := range []struct{ name, label string }{
		{"an alerting label of the spec (team) keeps its values apart", "team"},
		{"env, a common external label, keeps staging and production apart", "env"},
		{"cluster keeps a second cluster apart", "cluster"},
		{"a label given with --external-labels keeps its values apart", "datacenter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, src := range []string{"page", "outage"} {
				staging := with(burnAlert(src, "fleet", "llama"), c.label, "staging")
				if mutes(cfg, staging, with(burnAlert("ticket", "fleet", "llama"), c.label, "production")) {
					t.Errorf("a %s in staging mutes production's ticket", src)
				}
				if !mutes(cfg, staging, with(burnAlert("ticket", "fleet", "llama"), c.label, "staging")) {
					t.Errorf("a %s in staging no longer mutes staging's own ticket", src)
				}
			}
		})
	}
}

// burnAlert is an ErrorBudgetBurn alert of tier on one SLO and model.
func burnAlert(tier, slo, modelName string) prommodel.LabelSet {
	return prommodel.LabelSet{"alertname": model.AlertBurn, "burn_tier": prommodel.LabelValue(tier),
		"severity": "critical", "slo": prommodel.LabelValue(slo), "model_name": prommodel.LabelValue(modelName)}
}

// mutes tells whether some rule of cfg mutes target while source fires, as
// Alertmanager's inhibitor decides: both sides' matchers, then the equal labels.
func mutes(cfg *amconfig.Config, source, target prommodel.LabelSet) bool {
	for _, r := range cfg.InhibitRules {
		if !amlabels.Matchers(r.SourceMatchers).Matches(source) || !amlabels.Matchers(r.TargetMatchers).Matches(target) {
			continue
		}
		equal := true
		for _, l := range r.Equal {
			equal = equal && source[prommodel.LabelName(l)] == target[prommodel.LabelName(l)]
		}
		if equal {
			return true
		}
	}
	return false
}

func TestTheOutageTierMutesThePageAndTicketOfItsOwnSLOAndGroupOnly(t *testing.T) {
	files, err := Backend{}.Build(load(t, grouped))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := amconfig.Load("route: {receiver: r}\nreceivers: [{name: r}]\n" + string(files[0].Data))
	if err != nil {
		t.Fatalf("Alertmanager rejects the snippet: %v", err)
	}
	outage := burnAlert("outage", "fleet", "llama")
	for _, c := range []struct {
		name   string
		target prommodel.LabelSet
		want   bool
	}{
		{"the 14.4x page of the same SLO and model goes quiet", burnAlert("page", "fleet", "llama"), true},
		{"the ticket of the same SLO and model goes quiet", burnAlert("ticket", "fleet", "llama"), true},
		{"the page of another model still pages", burnAlert("page", "fleet", "mistral"), false},
		{"the page of another SLO still pages", burnAlert("page", "other", "llama"), false},
		{"the outage tier of another model still pages", burnAlert("outage", "fleet", "mistral"), false},
		{"a missing SLI of the same SLO still tells", prommodel.LabelSet{"alertname": model.AlertNoData, "slo": "fleet", "model_name": "llama"}, false},
	} {
		if got := mutes(cfg, outage, c.target); got != c.want {
			t.Errorf("%s: muted = %v", c.name, got)
		}
	}
	if mutes(cfg, burnAlert("page", "fleet", "llama"), outage) {
		t.Error("the page mutes the outage tier: the first page of a total outage would go quiet")
	}
}

func TestNoSnippetWithoutTiersToMute(t *testing.T) {
	for _, c := range []struct{ name, from, to string }{
		{"no ticket and no outage tier", "    labels: {team: llm-serving}", "    ticket: {enabled: false}\n    outage: {enabled: false}"},
		{"no page", "    labels: {team: llm-serving}", "    page: {enabled: false}"},
	} {
		files, err := Backend{}.Build(load(t, strings.Replace(grouped, c.from, c.to, 1)))
		if err != nil || len(files) != 0 {
			t.Errorf("%s: files %v, err %v", c.name, files, err)
		}
	}
}

func TestAnOutageTierWithoutTicketsStillGetsItsRule(t *testing.T) {
	files, err := Backend{}.Build(load(t, strings.Replace(grouped, "    labels: {team: llm-serving}", "    ticket: {enabled: false}", 1)))
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v, err %v", files, err)
	}
	if s := string(files[0].Data); strings.Contains(s, `burn_tier="ticket"`) || !strings.Contains(s, `burn_tier="outage"`) {
		t.Errorf("want only the outage tier's rule:\n%s", s)
	}
}

func TestCheckRejectsWhatAlertmanagerRejects(t *testing.T) {
	for name, snippet := range map[string]string{
		"a matcher that does not parse": "inhibit_rules:\n  - source_matchers: ['alertname=~\"(\"']\n",
		"an unknown field":              "inhibit_rules:\n  - source_match_typo: {a: b}\n",
	} {
		if err := Check([]byte(snippet)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
