package simulate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

func TestABurnOnOneGroupPagesThatGroupOnlyAndHandEditedRulesThatDropTheGroupFail(t *testing.T) {
	t.Parallel()
	set := slotest.Parse(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fleet}
spec:
  engine: vllm
  selector: {namespace: llm}
  groupBy: [model_name]
  window: 28d
  objectives: [{sli: errors, target: 99.9%}]
`)
	files, err := irules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Scenarios: []string{ScenarioGroupBurn}}
	clean, err := RunFiles(set, files, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := clean.Error(); err != nil {
		t.Fatalf("the generated rules must page the burning group only: %v", err)
	}
	subjects := map[string]bool{}
	for _, c := range clean.Checks {
		subjects[c.Subject] = true
	}
	for _, want := range []string{`ErrorBudgetBurn{severity="page",model_name="vllm-a"}`, `ErrorBudgetBurn{model_name="vllm-b"}`} {
		if !subjects[want] {
			t.Errorf("no check on %s: %+v", want, clean.Checks)
		}
	}

	// An alert that aggregates the group away pages for the whole fleet,
	// naming no model.
	old, repl := []byte("max without (window) ("), []byte("max without (window, model_name) (")
	if !bytes.Contains(files[0].Data, old) {
		t.Fatalf("the rule file has no %q to edit", old)
	}
	edited := append(files[:0:0], files...)
	edited[0].Data = bytes.ReplaceAll(files[0].Data, old, repl)
	r, err := RunFiles(set, edited, opts)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]string{}
	for _, c := range r.Failures() {
		failed[c.Subject] = c.Observed
	}
	if obs, ok := failed[`ErrorBudgetBurn{model_name="vllm-b"}`]; !ok || !strings.Contains(obs, `model_name=""`) {
		t.Errorf("an alert naming no group must fail the silent check, naming what fired; failures: %+v", r.Failures())
	}
	if _, ok := failed[`ErrorBudgetBurn{severity="page",model_name="vllm-a"}`]; !ok {
		t.Errorf("the burning group was never paged by name, yet passed; failures: %+v", r.Failures())
	}
}

func TestAGroupingLabelTheSelectorPinsCannotBeSplitAndIsReportedNotProven(t *testing.T) {
	set := slotest.Parse(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: pinned}
spec:
  engine: vllm
  selector: {model_name: llama}
  groupBy: [model_name]
  window: 28d
  objectives: [{sli: errors, target: 99.9%}]
`)
	r, err := Run(set, Options{Scenarios: []string{ScenarioGroupBurn}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 1 || !r.Checks[0].NotProven || !strings.Contains(r.Checks[0].Observed, "model_name") {
		t.Fatalf("checks %+v, want one not-proven check naming model_name", r.Checks)
	}
}

// parseSpec parses one spec document, failing the test on any problem.

func TestAGroupedBatchSLOTicketsTheBurningGroupOnly(t *testing.T) {
	t.Parallel()
	set := slotest.Parse(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: nightly}
spec:
  tier: batch
  engine: vllm
  selector: {namespace: batch}
  groupBy: [model_name]
  objectives: [{sli: errors, target: 99%}]
`)
	r, err := Run(set, Options{Scenarios: []string{ScenarioGroupBurn}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Error(); err != nil {
		t.Fatal(err)
	}
	subjects := map[string]bool{}
	for _, c := range r.Checks {
		subjects[c.Subject] = true
	}
	if !subjects[`ErrorBudgetBurn{severity="ticket",model_name="vllm-a"}`] || !subjects[`ErrorBudgetBurn{model_name="vllm-b"}`] {
		t.Errorf("checks %+v, want the ticket of vllm-a and silence of vllm-b", r.Checks)
	}
}
