package grafana

import (
	"slices"
	"strings"
	"testing"

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
