package simulate

import (
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/spec"
)

// TestOneIncidentPagesOnce replays each failure of a vLLM service with
// errors, incomplete and rejections SLOs beside the others' rules: the
// failing SLO pages and the others, which count the same requests, stay
// silent. Rules whose errors SLI also counts rejected requests (the SLI of
// a service without a rejections SLO) page twice in a rejection storm and
// fail the check.
func TestOneIncidentPagesOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulates hours of traffic")
	}
	parse := func(objectives string) []model.SLO {
		t.Helper()
		doc := "apiVersion: inferslo/v1alpha1\nkind: InferenceSLO\nmetadata: {name: chat}\nspec:\n  engine: vllm\n" +
			"  engineVersion: \"0.32.0\"\n  selector: {model_name: llama-3-70b-instruct}\n  window: 7d\n  objectives:\n" + objectives
		res, err := spec.Parse(spec.Source{Name: "chat.yaml", Data: []byte(doc)})
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		return res.Set.SLOs
	}
	service := model.Set{SLOs: parse("    - {sli: errors, target: 99.9%}\n    - {sli: rejections, target: 99.9%}\n")}
	errorsAlone := parse("    - {sli: errors, target: 99.9%}\n")[0]
	if !strings.Contains(errorsAlone.SLI.Bad.Expr, "admission_rejections") || strings.Contains(service.SLOs[0].SLI.Bad.Expr, "admission_rejections") {
		t.Errorf("errors SLIs: alone %s; beside rejections %s", errorsAlone.SLI.Bad.Expr, service.SLOs[0].SLI.Bad.Expr)
	}
	doubled, err := irules.Build(model.Set{SLOs: []model.SLO{errorsAlone, service.SLOs[1]}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		run   func() (Result, error)
		loud  string
		clean bool
	}{
		{
			name: "the generated rules page once for either failure",
			run:  func() (Result, error) { return Run(service, Options{Scenarios: []string{ScenarioOneIncident}}) },
		},
		{
			name: "an errors SLI that also counts rejections pages in the rejection storm too",
			run: func() (Result, error) {
				return RunFiles(service, doubled, Options{Scenarios: []string{ScenarioOneIncident}})
			},
			loud: `ErrorBudgetBurn{slo="chat-errors"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.run()
			if err != nil {
				t.Fatal(err)
			}
			var subjects []string
			for _, c := range res.Checks {
				subjects = append(subjects, c.SLO+" "+c.Subject)
				if c.NotProven {
					t.Errorf("not proven: %+v", c)
				}
			}
			for _, want := range []string{`chat-errors ErrorBudgetBurn{severity="page"}`, `chat-errors ErrorBudgetBurn{slo="chat-rejections"}`,
				`chat-rejections ErrorBudgetBurn{severity="page"}`, `chat-rejections ErrorBudgetBurn{slo="chat-errors"}`} {
				if !strings.Contains(strings.Join(subjects, "\n"), want) {
					t.Errorf("no check of %s among:\n%s", want, strings.Join(subjects, "\n"))
				}
			}
			failures := res.Failures()
			if tt.loud == "" {
				if len(failures) > 0 {
					t.Fatalf("failures: %+v", failures)
				}
				return
			}
			if len(failures) != 1 || failures[0].SLO != "chat-rejections" || failures[0].Subject != tt.loud || !strings.Contains(failures[0].Observed, "fired after") {
				t.Fatalf("want only %s of chat-rejections' storm to fail, got %+v", tt.loud, failures)
			}
			t.Logf("%s: %s", failures[0].Subject, failures[0].Observed)
		})
	}
}
