package promtest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// groupedSet is a fleet of vLLM models with one errors SLO per model.
func groupedSet(t *testing.T) model.Set {
	t.Helper()
	return parseSet(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fleet}
spec:
  engine: vllm
  groupBy: [model_name]
  window: 28d
  objectives:
    - {sli: errors, target: 99.9%}
  alerting:
    runbookURL: https://runbooks.example.com/fleet
    labels: {team: llm-serving}
    severities: {page: critical, ticket: warning}
`)
}

func TestABurnOnOneModelPagesForThatModelOnly(t *testing.T) {
	t.Parallel()
	dir, tests := writeOut(t, groupedSet(t), nil)
	text := string(tests[0].Data)
	for _, want := range []string{
		"fleet-errors: the page alert fires during a 20x burn of model_name fleet-errors-a and stays silent for fleet-errors-b",
		`vllm:request_success_total{finished_reason="error", model_name="fleet-errors-b", pod="sim-0"}`,
		"model_name: fleet-errors-a",
		"team: llm-serving",
		"severity: critical",
		"burn_tier: page",
		"severity: warning",
		"burn_tier: ticket",
		"summary: SLO fleet-errors for model_name=fleet-errors-a is burning its error budget 20.0x too fast",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("test file lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "model_name: fleet-errors-b") {
		t.Errorf("an alert is expected for the model at half the budget rate:\n%s", text)
	}
	path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	mustPass(t, filepath.Dir(path), path)
}

func TestPerModelTestsFailWhenTheRulesSumOverModels(t *testing.T) {
	t.Parallel()
	dir, tests := writeOut(t, groupedSet(t), func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("sum by (model_name) ("), []byte("sum("))
	})
	path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	if fails := runTests(t, filepath.Dir(path), path, "fleet-errors: the page alert fires during a 20x burn of model_name fleet-errors-a and stays silent for fleet-errors-b"); len(fails) == 0 {
		t.Fatal("the tests passed against rules that sum the models together")
	}
}

// A model that stops reporting raises SLIDataMissing naming it; a model
// that keeps reporting, and one never seen, raise nothing.
func TestTheNoDataAlertNamesTheModelThatVanished(t *testing.T) {
	t.Parallel()
	set := groupedSet(t)
	files, err := rules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fleet.rules.yaml"), files[0].Data, 0o644); err != nil {
		t.Fatal(err)
	}
	const summary = "SLO fleet-errors has no data for model_name=llama-8b"
	f := File{RuleFiles: []string{"fleet.rules.yaml"}, EvaluationInterval: "1m", Tests: []Test{{
		Name: "a model that stops reporting is named", Interval: "30s",
		InputSeries: []Series{
			{Series: `vllm:request_success_total{finished_reason="stop", model_name="llama-70b", pod="p0"}`, Values: "0+10x240"},
			{Series: `vllm:request_success_total{finished_reason="stop", model_name="llama-8b", pod="p1"}`, Values: "0+10x60"},
		},
		Alerts: []AlertTest{
			{EvalTime: "25m", Alertname: model.AlertNoData},
			{EvalTime: "90m", Alertname: model.AlertNoData, ExpAlerts: []ExpectedAlert{{
				Labels: map[string]string{"slo": "fleet-errors", "service": "fleet", "sli": "errors", "severity": "warning", "team": "llm-serving", "model_name": "llama-8b"},
				Annotations: map[string]string{
					"summary":     summary,
					"description": "The series behind SLO fleet-errors (service fleet) for model_name=llama-8b are missing, so its error budget and burn-rate alerts are blind. Check that the metrics are scraped and that the selectors still match.",
					"runbook_url": "https://runbooks.example.com/fleet",
				},
			}}},
		},
	}}}
	data, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "fleet.test.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mustPass(t, dir, path)
}

// TestAMissingBucketInOneModelHoldsThatModelOnly runs the generated
// missing-bucket test of a grouped latency SLO: one model is served
// without the threshold's bucket while another has it, so absent() alone
// would see the bucket and let the first model page. SLIMisconfigured
// names that model, and no burn alert fires; with the burn alerts' hold
// removed, the same test fails.
func TestAMissingBucketInOneModelHoldsThatModelOnly(t *testing.T) {
	t.Parallel()
	set := parseSet(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fleet}
spec:
  engine: vllm
  groupBy: [model_name]
  window: 28d
  objectives:
    - {sli: ttft, threshold: 500ms, target: 99%}
    - {sli: errors, target: 99.9%}
`)
	const name = "fleet-ttft: a missing threshold bucket raises SLIMisconfigured, not a burn alert"
	dir, tests := writeOut(t, set, nil)
	path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	for _, want := range []string{name, "model_name: fleet-ttft-a", "summary: 'SLO fleet-ttft is misconfigured for model_name=fleet-ttft-a: a threshold bucket is missing'"} {
		if !bytes.Contains(tests[0].Data, []byte(want)) {
			t.Fatalf("test file lacks %q:\n%s", want, tests[0].Data)
		}
	}
	// The claim is the missing-bucket group's: the file's burn and silence
	// groups are the kinds TestABurnOnOneModelPagesForThatModelOnly and the
	// examples' tests replay, each group replaying the whole rule file.
	mustPass(t, filepath.Dir(path), path, name)

	hold := regexp.MustCompile(`(unless on \(slo, model_name\)\n\s*)inferslo:sli_misconfigured`)
	dir, tests = writeOut(t, set, func(b []byte) []byte {
		return hold.ReplaceAll(b, []byte("${1}no_such_series"))
	})
	path = filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	if fails := strings.Join(runTests(t, filepath.Dir(path), path, name), "\n"); !strings.Contains(fails, name) {
		t.Errorf("without the hold the missing-bucket test still passed; failures:\n%s", fails)
	}
}
