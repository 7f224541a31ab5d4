package promtest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// ttftSLO is a 99% / 28d TTFT SLO on vLLM (threshold 0.5s, a real bucket),
// as the shorthand resolves it.
func ttftSLO(t *testing.T) model.SLO {
	t.Helper()
	target, err := model.ParseDecimal("99%")
	if err != nil {
		t.Fatal(err)
	}
	threshold, _ := model.ParseDecimal("0.5")
	window := 28 * 24 * time.Hour
	tiers, err := model.WorkbookTiersOf(model.Severities, window, 2*time.Minute, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const sel = `model_name="llama-3-70b"`
	return model.SLO{
		Name: "chat-ttft", Service: model.Service{Name: "chat"}, Source: "chat.yaml",
		Objective: target, Window: window, Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
		Alerting: model.Alerting{Tiers: tiers, NoData: true, RunbookURL: "https://runbooks.example.com/chat"},
		SLI: model.SLI{Counter: true,
			Total: &model.Query{Expr: `vllm:time_to_first_token_seconds_count{` + sel + `}`},
			Good:  &model.Query{Expr: `vllm:time_to_first_token_seconds_bucket{le="0.5",` + sel + `}`}},
		Inference: &model.Inference{Engine: "vllm", EngineTitle: "vLLM", Role: "ttft", Threshold: threshold,
			Histogram: "vllm:time_to_first_token_seconds",
			Buckets:   []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0},
			Selector:  sel, TTFTDenominator: "histogram",
			Signals: model.Signals{Requests: "vllm:request_success_total"}},
	}
}

// writeOut writes rule and test files as `inferslo compile` lays them out.
func writeOut(t *testing.T, set model.Set, edit func([]byte) []byte) (dir string, tests artifact.Set) {
	t.Helper()
	ruleFiles, err := rules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests, err = build(set)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	for _, f := range append(ruleFiles, tests...) {
		data := f.Data
		if edit != nil && strings.HasSuffix(f.Path, ".rules.yaml") {
			data = edit(data)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, tests
}

func TestTTFTPageFiresDuringATwentyTimesBurnAndIsSilentAtHalfTheBudget(t *testing.T) {
	t.Parallel()
	set := model.Set{SLOs: []model.SLO{ttftSLO(t)}}
	dir, tests := writeOut(t, set, nil)
	if len(tests) != 1 || tests[0].Path != "prometheus/chat.test.yaml" {
		t.Fatalf("test files: %v", tests)
	}
	text := string(tests[0].Data)
	for _, want := range []string{
		"rule_files:\n  - chat.rules.yaml",
		"chat-ttft: the page alert fires during a 20x burn",
		"chat-ttft: the page alert is silent at half the budget rate",
		`vllm:time_to_first_token_seconds_bucket{le="0.5", model_name="llama-3-70b", pod="sim-0"}`,
		"severity: page",
		"burning its error budget 20.0x too fast",
		"exp_alerts: []",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("test file lacks %q:\n%s", want, text)
		}
	}
	path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	mustPass(t, filepath.Dir(path), path)
}

func TestGeneratedTestsFailWhenTheRulesAreEdited(t *testing.T) {
	t.Parallel()
	set := model.Set{SLOs: []model.SLO{ttftSLO(t)}}
	// Page factors raised tenfold: a 20x burn no longer pages. (Raising
	// only 14.4 would not do: the 6x pair, whose windows also see 20x from
	// the start, still pages; the simulator catches that one by its delay.)
	dir, tests := writeOut(t, set, func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(" > 14.4\n"), []byte(" > 144\n"))
		return bytes.ReplaceAll(b, []byte(" > 6\n"), []byte(" > 60\n"))
	})
	path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	fails := runTests(t, filepath.Dir(path), path, "chat-ttft: the page alert fires during a 20x burn")
	if len(fails) == 0 {
		t.Fatal("the tests passed against rules whose page factor was raised tenfold")
	}
	if !strings.Contains(strings.Join(fails, "\n"), "the page alert fires during a 20x burn") {
		t.Errorf("the failure does not name the burn test:\n%s", strings.Join(fails, "\n"))
	}
}

func TestEveryExampleServiceGetsPassingTests(t *testing.T) {
	t.Parallel()
	set := loadSet(t, "../../examples")
	dir, tests := writeOut(t, set, nil)
	// Threshold SLIs have no event counts for a burn to scale; the
	// simulator proves them, and a service of only those has no tests.
	want := 0
	for _, service := range set.PerService() {
		for _, slo := range service.SLOs {
			if countable(slo) {
				want++
				break
			}
		}
	}
	if len(tests) != want {
		t.Errorf("%d test files for %d services with event-budgeted SLOs", len(tests), want)
	}
	again, err := build(set)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tests {
		if !bytes.Equal(tests[i].Data, again[i].Data) {
			t.Errorf("%s differs between two builds", tests[i].Path)
		}
	}
	// Every test group replays the service's whole rule file for up to an
	// hour of evaluations (about 130 CPU-seconds for the examples, 16 for
	// one group of each kind): CI's long promtest step (INFERSLO_LONG=1)
	// replays every one in process, and its compile step runs promtool
	// over every compiled example's tests. The suite's other tests replay
	// the groups of each kind their claims are about.
	if os.Getenv("INFERSLO_LONG") == "" {
		t.Skip("replays the examples' generated tests; INFERSLO_LONG=1 runs every group (CI's long promtest step)")
	}
	for i := range tests {
		path := filepath.Join(dir, filepath.FromSlash(tests[i].Path))
		if err := os.WriteFile(path, tests[i].Data, 0o644); err != nil {
			t.Fatal(err)
		}
		// Services replay independently: on every core, this test is no
		// longer the suite's last to finish.
		t.Run(tests[i].Path, func(t *testing.T) {
			t.Parallel()
			mustPass(t, filepath.Dir(path), path)
		})
	}
}

// TestAMissingThresholdBucketPagesNobody runs the generated missing-bucket
// test (promtool too, when INFERSLO_PROMTOOL is set): the threshold's
// bucket is absent while the count grows, so every event would count as
// bad; no ErrorBudgetBurn may fire and SLIMisconfigured must. With the
// burn alerts' hold removed from the rules, the same test fails.
func TestAMissingThresholdBucketPagesNobody(t *testing.T) {
	t.Parallel()
	hold := regexp.MustCompile(`(unless on \(slo\)\n\s*)inferslo:sli_misconfigured`)
	set := model.Set{SLOs: []model.SLO{ttftSLO(t)}}
	const name = "chat-ttft: a missing threshold bucket raises SLIMisconfigured, not a burn alert"
	dir, tests := writeOut(t, set, nil)
	path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	if !bytes.Contains(tests[0].Data, []byte(name)) {
		t.Fatalf("no test %q in %s", name, tests[0].Path)
	}
	if !bytes.Contains(tests[0].Data, []byte(`le: "0.5"`)) {
		t.Errorf("the expected SLIMisconfigured alert does not name the bucket le=0.5:\n%s", tests[0].Data)
	}
	// The claim is the missing-bucket group's; the file's burn and silence
	// groups are TestTTFTPageFiresDuringATwentyTimesBurnAndIsSilentAtHalfTheBudget's.
	mustPass(t, filepath.Dir(path), path, name)

	dir, tests = writeOut(t, set, func(b []byte) []byte {
		return hold.ReplaceAll(b, []byte("${1}no_such_series"))
	})
	path = filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	fails := strings.Join(runTests(t, filepath.Dir(path), path, name), "\n")
	if !strings.Contains(fails, name) {
		t.Errorf("without the hold the missing-bucket test still passed; failures:\n%s", fails)
	}
}

// TestAServiceWithErrorsAndRejectionsPagesOnceInPromtool runs, for each
// engine that counts rejections, the tests of a service whose errors and
// rejections SLOs read the same failures in promtool (in process without
// INFERSLO_PROMTOOL): the traffic of the rejections tests counts no
// failure the errors SLO sees, so its silent cases stay silent, and a
// rejection storm pages as the rejections SLO alone.
func TestAServiceWithErrorsAndRejectionsPagesOnceInPromtool(t *testing.T) {
	t.Parallel()
	// Which alerts a test expects is read from the file; promtool runs the
	// vLLM row's (a term dropped, the other rows a matcher negated) unless
	// INFERSLO_LONG is set, as CI's long promtest step sets it.
	for _, c := range []struct {
		name, engine string
		promtool     bool
	}{
		{"Triton's failure counter with a REJECTED reason", "engine: triton\n  selector: {model: ensemble}", os.Getenv("INFERSLO_LONG") != ""},
		{"TGI's failure counter with an overloaded reason", "engine: tgi\n  selector: {service: chat}", os.Getenv("INFERSLO_LONG") != ""},
		{"vLLM's admission rejections added to its failures", "engine: vllm\n  engineVersion: \"0.32.0\"\n  selector: {model_name: chat}", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := parseSet(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: llm-chat}
spec:
  `+strings.ReplaceAll(c.engine, `\n`, "\n")+`
  window: 28d
  objectives:
    - {sli: errors, target: 99.9%}
    - {sli: rejections, target: 99.9%}
`)
			dir, tests := writeOut(t, set, nil)
			if len(tests) != 1 {
				t.Fatalf("%d test files", len(tests))
			}
			if !bytes.Contains(tests[0].Data, []byte("llm-chat-rejections: the page alert is silent at half the budget rate")) {
				t.Fatalf("no silent case of the rejections SLO:\n%s", tests[0].Data)
			}
			// A rejection storm pages once: every alert a rejections test
			// expects, up to every request refused, is the rejections SLO's.
			var f File
			if err := yaml.Unmarshal(tests[0].Data, &f); err != nil {
				t.Fatal(err)
			}
			storms := 0
			for _, tt := range f.Tests {
				if !strings.HasPrefix(tt.Name, "llm-chat-rejections: ") {
					continue
				}
				for _, at := range tt.Alerts {
					for _, a := range at.ExpAlerts {
						storms++
						if a.Labels["slo"] != "llm-chat-rejections" {
							t.Errorf("%s: %s also fires for %s", tt.Name, at.Alertname, a.Labels["slo"])
						}
					}
				}
			}
			if storms == 0 {
				t.Error("no rejections test expects an alert")
			}
			if c.promtool {
				path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
				mustPass(t, filepath.Dir(path), path)
			}
		})
	}
}

// build returns the test files of set with the built-in templates, as a
// compilation does.
func build(set model.Set) (artifact.Set, error) {
	services, err := rules.Services(set, nil)
	if err != nil {
		return nil, err
	}
	return Files(set, services)
}
