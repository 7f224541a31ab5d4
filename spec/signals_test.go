package spec_test

import (
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/spec"
)

// Both load-shedding signals in the shorthand become one JSON annotation
// that ends in "}}"; it is decoded field by field, never reaching a
// template, so the check for template braces must not refuse it.
func TestBothLoadSheddingSignalsAndAQueueBacklogResolve(t *testing.T) {
	res, err := spec.Parse(spec.Source{Name: "job.yaml", Data: []byte(`
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: job}
spec:
  engine: vllm
  window: 28d
  objectives: [{sli: ttft, threshold: 250ms, target: 99%}]
  alerting:
    queueBacklog: {perReplica: "6", for: 1m}
    loadShedding:
      shed: {above: "3", for: 2m}
      reduceContext: {above: "1.5", for: 10s}
`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("the spec does not resolve: %v", err)
	}
	a := res.Set.SLOs[0].Alerting
	if a.Shedding == nil || a.Shedding.Shed.Factor.String() != "3" || a.Shedding.Shed.For != 2*time.Minute ||
		a.Shedding.ReduceContext.Factor.String() != "1.5" || a.Shedding.ReduceContext.For != 10*time.Second {
		t.Errorf("shedding %+v", a.Shedding)
	}
	if a.Backlog == nil || a.Backlog.PerReplica.String() != "6" || a.Backlog.For != time.Minute {
		t.Errorf("backlog %+v", a.Backlog)
	}
}

// The shorthand's queueBacklog and loadShedding are TTFT signals: beside
// other objectives they go to the ttft SLO alone, and a spec without one
// is refused naming the missing objective.
func TestTheShorthandsTTFTSignalsGoToItsTTFTObjective(t *testing.T) {
	const head = `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  window: 28d
  alerting:
    queueBacklog: {perReplica: "6"}
    loadShedding: {shed: {above: "2", for: 30s}}
`
	res, err := spec.Parse(spec.Source{Name: "chat.yaml", Data: []byte(head + `
  objectives:
    - {sli: ttft, threshold: 250ms, target: 99%}
    - {sli: itl, threshold: 50ms, target: 99%}
    - {sli: errors, target: 99.9%}
`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("the spec does not resolve: %v", err)
	}
	for _, s := range res.Set.SLOs {
		ttft := s.Name == "chat-ttft"
		if a := s.Alerting; (a.Backlog != nil) != ttft || (a.Shedding != nil) != ttft {
			t.Errorf("%s: backlog %+v, shedding %+v", s.Name, a.Backlog, a.Shedding)
		}
	}
	res, err = spec.Parse(spec.Source{Name: "chat.yaml", Data: []byte(head + `
  objectives: [{sli: errors, target: 99.9%}]
`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err == nil {
		t.Error("queueBacklog and loadShedding without a ttft objective resolve")
	}
}

// A plain OpenSLO SLO that names its engine but no inferslo.dev/selector
// scopes the engine's series (its dashboard panels) by the matchers its
// total query puts on them.
func TestAPlainSLONamingItsEngineIsScopedByItsQueries(t *testing.T) {
	res, err := spec.Parse(spec.Source{Name: "contract.yaml", Data: []byte(`
apiVersion: openslo/v1
kind: SLO
metadata:
  name: contract-ttft
  annotations:
    inferslo.dev/engine: litellm
    inferslo.dev/sli: ttft
    inferslo.dev/threshold: 1s
spec:
  service: contract
  budgetingMethod: Occurrences
  timeWindow: [{duration: 28d, isRolling: true}]
  indicator:
    metadata: {name: contract-ttft}
    spec:
      ratioMetric:
        counter: true
        good: {metricSource: {type: Prometheus, spec: {query: 'litellm_llm_api_time_to_first_token_metric_bucket{model="gpt-4o",team="contract",le="1.0"}'}}}
        total: {metricSource: {type: Prometheus, spec: {query: 'litellm_llm_api_time_to_first_token_metric_count{model="gpt-4o",team="contract"}'}}}
  objectives: [{target: 0.99}]
`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	inf := res.Set.SLOs[0].Inference
	if inf == nil || inf.Selector != `model="gpt-4o",team="contract"` || strings.Join(inf.SelectorLabels, ",") != "model,team" {
		t.Errorf("inference %+v", inf)
	}
}
