package argo

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
)

// Each service gets one template, one metric per SLO reading the query
// inferslo budget reads, gated at the default share unless a Rollout
// passes its own.
func TestEachServiceGetsATemplateGatingEverySLOOnTheBudgetQuery(t *testing.T) {
	set := slotest.Parse(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  selector: {namespace: llm}
  groupBy: [model_name]
  window: 28d
  objectives: [{sli: errors, target: 99.9%}, {sli: ttft, threshold: 250ms, target: 99%}]
---
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: batch}
spec:
  engine: vllm
  tier: batch
  selector: {namespace: jobs}
  objectives: [{sli: errors, target: 99.5%}]
`)
	files, err := Backend{FailBelow: 0.25}.Build(set)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "argo/batch.analysistemplate.yaml" || files[1].Path != "argo/chat.analysistemplate.yaml" {
		t.Fatalf("files: %v", files)
	}
	bySLO := map[string]model.SLO{}
	for _, s := range set.SLOs {
		bySLO[s.Name] = s
	}
	metrics := 0
	for _, f := range files {
		var tpl template
		if err := yaml.Unmarshal(f.Data, &tpl); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if tpl.Kind != "AnalysisTemplate" || !strings.HasPrefix(tpl.Metadata.Name, "inferslo-") || len(tpl.Spec.Args) != 2 ||
			tpl.Spec.Args[0].Value != nil || *tpl.Spec.Args[1].Value != "0.25" {
			t.Errorf("%s: %+v", f.Path, tpl)
		}
		for _, m := range tpl.Spec.Metrics {
			metrics++
			slo, ok := bySLO[m.Name]
			if !ok || m.Provider.Prometheus.Query != model.BudgetQuery(slo) || m.SuccessCondition != SuccessCondition || m.Count != 1 {
				t.Errorf("%s: metric %+v", f.Path, m)
			}
		}
	}
	if metrics != len(set.SLOs) {
		t.Errorf("%d metrics for %d SLOs", metrics, len(set.SLOs))
	}
	if _, err := (Backend{FailBelow: 2}).Build(set); err == nil {
		t.Error("a gate of 2 budgets was accepted")
	}
}
