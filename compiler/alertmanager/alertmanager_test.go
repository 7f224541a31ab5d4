package alertmanager

import (
	"fmt"
	"strings"
	"testing"

	amconfig "github.com/prometheus/alertmanager/config"

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
	files, err := Build(load(t, grouped))
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
	if len(cfg.InhibitRules) != 1 {
		t.Fatalf("%d inhibit rules", len(cfg.InhibitRules))
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
	if strings.Join(equal, ",") != "slo,model_name" {
		t.Errorf("equal = %v, want slo and model_name: a page on one model must not mute another's ticket", equal)
	}
}

func TestNoSnippetWithoutBothTiers(t *testing.T) {
	set := load(t, strings.Replace(grouped, "    labels: {team: llm-serving}", "    ticket: {enabled: false}", 1))
	files, err := Build(set)
	if err != nil || len(files) != 0 {
		t.Fatalf("files %v, err %v", files, err)
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
