package grafana

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/golden"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

func parseSpecs(t *testing.T, docs ...string) model.Set {
	t.Helper()
	var sources []spec.Source
	for i, d := range docs {
		sources = append(sources, spec.Source{Name: string(rune('a'+i)) + ".yaml", Data: []byte(d)})
	}
	res, err := spec.Parse(sources...)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res.Set
}

func TestTwoSpecsSharingAServiceCompileToOneDashboardHoldingBoth(t *testing.T) {
	set := parseSpecs(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat-70b}
spec:
  service: chat
  engine: vllm
  selector: {model_name: llama-70b}
  window: 28d
  objectives: [{sli: errors, target: 99.9%}]
`, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat-8b}
spec:
  service: chat
  engine: vllm
  window: 28d
  objectives:
    - {sli: errors, target: 99.5%, selector: {model_name: llama-8b}}
`)
	files := build(t, set)
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if want := []string{"grafana/chat.json", "grafana/overview.json"}; !slices.Equal(paths, want) {
		t.Fatalf("paths = %v, want %v", paths, want)
	}
	d := decode(t, files["grafana/chat.json"])
	var rows []string
	for _, p := range d["panels"].([]any) {
		if pm := p.(map[string]any); pm["type"] == "row" {
			rows = append(rows, pm["title"].(string))
		}
	}
	for _, name := range []string{"chat-70b-errors", "chat-8b-errors"} {
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, "SLO "+name+":") }) {
			t.Errorf("the chat dashboard has no row for %s: %v", name, rows)
		}
	}
	queries := strings.Join(allQueries(t, d), "\n")
	if !strings.Contains(queries, `slo="chat-8b-errors"`) || !strings.Contains(queries, `slo="chat-70b-errors"`) {
		t.Errorf("the chat dashboard does not query both SLOs:\n%s", queries)
	}
}

func TestAGroupedSLOGetsAVariableAndALinePerGroup(t *testing.T) {
	set := parseSpecs(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fleet}
spec:
  engine: vllm
  groupBy: [model_name]
  window: 28d
  objectives: [{sli: errors, target: 99.9%}]
`)
	files := build(t, set)
	d := decode(t, files["grafana/fleet.json"])
	var vars []string
	for _, v := range d["templating"].(map[string]any)["list"].([]any) {
		vars = append(vars, v.(map[string]any)["name"].(string))
	}
	if !slices.Contains(vars, "model_name") {
		t.Errorf("variables %v lack model_name", vars)
	}
	budget := panelsTitled(d, "Error budget remaining")
	if len(budget) == 0 {
		t.Fatal("no budget panel")
	}
	text := jsonText(budget[0])
	for _, want := range []string{`model_name=~\"$model_name\"`, `{{model_name}}`} {
		if !strings.Contains(text, want) {
			t.Errorf("the budget panel lacks %s: %s", want, text)
		}
	}
	overview := jsonText(decode(t, files["grafana/overview.json"]))
	if !strings.Contains(overview, "{{slo}} {{model_name}}") || strings.Contains(overview, "$model_name") {
		t.Errorf("the overview should list fleet-errors per model without a variable: %s", overview)
	}
}

// loadFleet reads the mixed fleet of testdata/fleet: one service from
// three specs, three models grouped on vLLM, one grouped on SGLang and a
// stricter ungrouped promise for one vLLM model.
func loadFleet(t *testing.T) model.Set {
	t.Helper()
	res, err := spec.Load("../../testdata/fleet")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res.Set
}

func TestTheMixedFleetDashboardMatchesItsGoldenFileAndGrafanasSchemas(t *testing.T) {
	s := loadSchemas(t)
	files, err := dashboards(loadFleet(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := s.validate(f.Data); err != nil {
			t.Errorf("%s does not match the Grafana schemas:\n%v", f.Path, err)
		}
		golden.Check(t, "fleet/"+path.Base(f.Path), f.Data, *update)
	}
}

// latencyRow is a latency row of a dashboard and its panels.
type latencyRow struct {
	title  string
	panels []map[string]any
}

func latencyRows(d map[string]any) []latencyRow {
	var out []latencyRow
	in := false
	for _, p := range d["panels"].([]any) {
		pm := p.(map[string]any)
		if pm["type"] == "row" {
			in = strings.HasPrefix(pm["title"].(string), "Latency")
			if in {
				out = append(out, latencyRow{title: pm["title"].(string)})
			}
			continue
		}
		if in {
			out[len(out)-1].panels = append(out[len(out)-1].panels, pm)
		}
	}
	return out
}

func TestEachEngineAndSpecOfAServiceGetsItsOwnLatencyRowUnderItsOwnThreshold(t *testing.T) {
	d := decode(t, build(t, loadFleet(t))["grafana/assist.json"])
	rows := latencyRows(d)
	type want struct {
		histogram, selector, by string
		threshold               string
	}
	wants := map[string]want{
		`Latency on vLLM {model_name="llama-3-70b-instruct",namespace="llm-vllm"}`: {"vllm:time_to_first_token_seconds_bucket", `namespace="llm-vllm"`, "sum by (le)", "0.25"},
		`Latency on SGLang {namespace="llm-sglang"} per model_name`:                {"sglang:time_to_first_token_seconds_bucket", `namespace="llm-sglang"`, "sum by (le, model_name)", "0.8"},
		`Latency on vLLM {namespace="llm-vllm"} per model_name`:                    {"vllm:time_to_first_token_seconds_bucket", `namespace="llm-vllm"`, "sum by (le, model_name)", "0.5"},
	}
	if len(rows) != len(wants) {
		t.Fatalf("latency rows %v, want one per engine and spec: %v", rows, wants)
	}
	for _, r := range rows {
		w, ok := wants[r.title]
		if !ok {
			t.Errorf("unexpected latency row %q", r.title)
			continue
		}
		var ttft map[string]any
		for _, p := range r.panels {
			if strings.HasPrefix(p["title"].(string), "Time to first token") {
				ttft = p
			}
		}
		if ttft == nil {
			t.Errorf("row %q has no TTFT panel", r.title)
			continue
		}
		if got := thresholdValues(ttft); !slices.Equal(got, []string{w.threshold}) {
			t.Errorf("row %q draws thresholds %v, want only its own SLO's %v", r.title, got, w.threshold)
		}
		qs := exprs(ttft)
		if len(qs) != 3 {
			t.Errorf("row %q: %d percentile queries, want p50, p95 and p99", r.title, len(qs))
		}
		for _, q := range qs {
			for _, part := range []string{w.histogram, w.selector, w.by + " ("} {
				if !strings.Contains(q, part) {
					t.Errorf("row %q: query %s lacks %s", r.title, q, part)
				}
			}
			if strings.Contains(w.by, "model_name") != strings.Contains(jsonText(ttft), "{{model_name}}") {
				t.Errorf("row %q: a grouped row names the model in its legend, an ungrouped one does not: %s", r.title, jsonText(ttft["targets"]))
			}
		}
	}
}

func TestTheModelVariableListsEveryGroupOfEveryEngineFromTheSLORecordings(t *testing.T) {
	d := decode(t, build(t, loadFleet(t))["grafana/assist.json"])
	var model map[string]any
	for _, v := range d["templating"].(map[string]any)["list"].([]any) {
		if vm := v.(map[string]any); vm["name"] == "model_name" {
			model = vm
		}
	}
	if model == nil {
		t.Fatal("no model_name variable")
	}
	q := model["query"].(string)
	// The grouped specs' models come from their recordings, which hold
	// every group of both engines; the pinned spec's model from its own
	// engine series.
	for _, want := range []string{`inferslo:error_budget_remaining:ratio{service="assist"}`, `vllm:request_success_total{model_name="llama-3-70b-instruct",namespace="llm-vllm"}`} {
		if !strings.Contains(q, want) {
			t.Errorf("model_name variable %s does not read %s", q, want)
		}
	}
	if model["regex"] != `/model_name="([^"]*)"/` {
		t.Errorf("a variable over several sources must pick the label out of each result line: regex %v", model["regex"])
	}
}

func TestEngineLoadPanelsReadEveryEngineOfAMixedService(t *testing.T) {
	d := decode(t, build(t, loadFleet(t))["grafana/assist.json"])
	for _, title := range []string{"Token throughput", "Queue depth", "KV-cache usage"} {
		ps := panelsTitled(d, title)
		if len(ps) != 1 {
			t.Fatalf("%d panels titled %s, want 1", len(ps), title)
		}
		qs := strings.Join(exprs(ps[0]), "\n")
		for _, want := range []string{`vllm:`, `sglang:`, `namespace="llm-vllm"`, `namespace="llm-sglang"`} {
			if !strings.Contains(qs, want) {
				t.Errorf("%s does not read %s:\n%s", title, want, qs)
			}
		}
	}
}
