package keda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	inferspec "github.com/inferslo/inferslo/spec"
)

// fleetSpec is two models on vLLM, grouped by model, each autoscaled on its
// own Deployment: TTFT under 250ms for 99.5% of requests.
const fleetSpec = `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fleet}
spec:
  engine: vllm
  groupBy: [model_name]
  window: 28d
  objectives:
    - {sli: ttft, threshold: 250ms, target: 99.5%}
    - {sli: errors, target: 99.9%}
  autoscaling:
    target: {name: "vllm-{{model_name}}"}
    minReplicas: 2
    maxReplicas: 16
    prometheus: http://prometheus-operated.monitoring:9090
    queuePerReplica: "4"
    burnRateTrigger: true
    groups: [{model_name: llama-3-70b}, {model_name: qwen-2-7b}]
`

// fleetSeries writes two pods per model for 40 minutes at 1,000 requests a
// minute per pod. llama-3-70b meets its SLO comfortably: 60% of requests
// under 100ms, 99.7% under 250ms, 0.05% errors, one request waiting per
// pod. qwen-2-7b burns: 20% over 250ms, 30 waiting per pod.
func fleetSeries() []series {
	var out []series
	add := func(name, labels, values string) {
		out = append(out, series{Series: name + "{" + labels + "}", Values: values})
	}
	per := func(n int) string { return fmt.Sprintf("0+%dx40", n) }
	for _, m := range []struct {
		model              string
		under100, under250 int
		errors, waiting    int
	}{{"llama-3-70b", 600, 997, 1, 1}, {"qwen-2-7b", 500, 800, 1, 30}} {
		for _, pod := range []string{"a", "b"} {
			l := fmt.Sprintf(`model_name=%q,pod=%q`, m.model, pod)
			h := "vllm:time_to_first_token_seconds"
			add(h+"_bucket", l+`,le="0.1"`, per(m.under100))
			add(h+"_bucket", l+`,le="0.25"`, per(m.under250))
			add(h+"_bucket", l+`,le="0.5"`, per(1000))
			add(h+"_bucket", l+`,le="+Inf"`, per(1000))
			add(h+"_count", l, per(1000))
			add("vllm:request_success_total", l+`,finished_reason="stop"`, per(1000*2-m.errors))
			add("vllm:request_success_total", l+`,finished_reason="error"`, per(m.errors))
			add("vllm:num_requests_waiting", l, fmt.Sprintf("%dx40", m.waiting))
		}
	}
	return out
}

type series struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

// The promtool test file, with PromQL expression tests (promtest's File
// holds alert tests only).
type exprFile struct {
	RuleFiles          []string   `yaml:"rule_files"`
	EvaluationInterval string     `yaml:"evaluation_interval"`
	Tests              []exprTest `yaml:"tests"`
}

type exprTest struct {
	Name        string     `yaml:"name"`
	Interval    string     `yaml:"interval"`
	InputSeries []series   `yaml:"input_series"`
	Exprs       []exprCase `yaml:"promql_expr_test"`
}

type exprCase struct {
	Expr       string      `yaml:"expr"`
	EvalTime   string      `yaml:"eval_time"`
	ExpSamples []expSample `yaml:"exp_samples"`
}

type expSample struct {
	Labels string  `yaml:"labels"`
	Value  float64 `yaml:"value"`
}

// compileFleet compiles fleetSpec's rules into dir and returns the
// ScaledObjects by file name.
func compileFleet(t *testing.T, dir string) map[string]decoded {
	t.Helper()
	res, err := inferspec.Parse(inferspec.Source{Name: "fleet.yaml", Data: []byte(fleetSpec)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	content := ruleFile(t, res.Set)
	if err := os.WriteFile(filepath.Join(dir, "fleet.rules.yaml"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := Build(res.Set)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]decoded{}
	for _, f := range files {
		out[filepath.Base(f.Path)] = decode(t, f.Data)
	}
	return out
}

// TestPromtoolReadsEveryValueTriggerAtOrUnderItsTargetWhileTheSLOHolds is
// the proof that the fleet never scales out while the SLO is met: promtool
// evaluates each Value trigger of the model that meets its SLO, over the
// generated recording rules, at or under its target plus the HPA's 10%
// tolerance, while the other model burns (and its own triggers read over
// target, so the check can fail). It runs the real promtool when
// INFERSLO_PROMTOOL names one, Prometheus' engine in process otherwise.
func TestPromtoolReadsEveryValueTriggerAtOrUnderItsTargetWhileTheSLOHolds(t *testing.T) {
	dir := t.TempDir()
	objects := compileFleet(t, dir)
	healthy, burning := objects["vllm-llama-3-70b.yaml"], objects["vllm-qwen-2-7b.yaml"]
	if len(objects) != 2 || len(healthy.Spec.Triggers) == 0 || len(burning.Spec.Triggers) == 0 {
		t.Fatalf("objects = %v, want one per model", objects)
	}
	const at = "35m"
	var cases []exprCase
	for _, o := range []struct {
		d    decoded
		calm bool
	}{{healthy, true}, {burning, false}} {
		for _, tr := range o.d.Spec.Triggers {
			q := tr.Metadata["query"].(string)
			target, err := strconv.ParseFloat(tr.Metadata["threshold"].(string), 64)
			if err != nil {
				t.Fatal(err)
			}
			if tr.MetricType == "AverageValue" {
				// The HPA divides by the replica count: two pods.
				q = "(" + q + ") / 2"
			}
			op := "<="
			if !o.calm {
				op = ">"
			}
			cases = append(cases, exprCase{
				Expr:       fmt.Sprintf("(%s) %s bool %s", q, op, strconv.FormatFloat(target*1.1, 'g', -1, 64)),
				EvalTime:   at,
				ExpSamples: []expSample{{Labels: "{}", Value: 1}},
			})
		}
	}
	// A vanished series reads as nothing (a KEDA error, so no scale-in),
	// never as 0.
	for _, tr := range healthy.Spec.Triggers {
		q := tr.Metadata["query"].(string)
		cases = append(cases, exprCase{Expr: strings.ReplaceAll(q, "llama-3-70b", "renamed-model"), EvalTime: at})
	}
	f := exprFile{
		RuleFiles:          []string{"fleet.rules.yaml"},
		EvaluationInterval: "30s",
		Tests:              []exprTest{{Name: "llama-3-70b meets its SLO while qwen-2-7b burns", Interval: "1m", InputSeries: fleetSeries(), Exprs: cases}},
	}
	data, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	testPath := filepath.Join(dir, "fleet.test.yaml")
	if err := os.WriteFile(testPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if bin := os.Getenv("INFERSLO_PROMTOOL"); bin != "" {
		out, err := exec.Command(bin, "test", "rules", testPath).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool test rules: %v\n%s\n%s", err, out, data)
		}
		t.Logf("promtool test rules:\n%s", out)
		return
	}
	var load strings.Builder
	load.WriteString("load 1m\n")
	for _, s := range f.Tests[0].InputSeries {
		fmt.Fprintf(&load, "  %s %s\n", s.Series, s.Values)
	}
	query := ruleEngine(t, load.String(), filepath.Join(dir, "fleet.rules.yaml"), 35*time.Minute)
	for _, o := range []decoded{healthy, burning} {
		for _, tr := range o.Spec.Triggers {
			t.Logf("%s %s = %v (target %s)", o.Metadata.Name, tr.Name, query(tr.Metadata["query"].(string)), tr.Metadata["threshold"])
		}
	}
	for _, c := range cases {
		got := query(c.Expr)
		want := len(c.ExpSamples)
		if len(got) != want || want == 1 && got[0] != 1 {
			t.Errorf("%s = %v, want %v", c.Expr, got, c.ExpSamples)
		}
	}
}
