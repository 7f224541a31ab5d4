package spec_test

import (
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

// The shorthand's alerting section is spec-wide: its backlog and shedding
// settings tune the spec's ttft objectives and leave its others alone,
// while a spec without a ttft objective is told they read nothing.
func TestBacklogAndSheddingSettingsGoToTheSpecsTTFTObjectives(t *testing.T) {
	cases := []struct {
		name       string
		objectives string
		wantErrors int
	}{
		{"beside itl and errors objectives they tune the ttft one", `[{sli: ttft, threshold: 250ms, target: 99%}, {sli: itl, threshold: 50ms, target: 99%}, {sli: errors, target: 99.9%}]`, 0},
		{"without a ttft objective each setting is an error per SLO", `[{sli: errors, target: 99.9%}]`, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := spec.Parse(spec.Source{Name: "chat.yaml", Data: []byte(`
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  window: 28d
  objectives: ` + c.objectives + `
  alerting:
    queueBacklog: {perReplica: "6"}
    loadShedding: {shed: {above: "2", for: 30s}}
`)})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Problems.Errors()); got != c.wantErrors {
				t.Fatalf("%d errors, want %d: %v", got, c.wantErrors, res.Problems)
			}
			for _, s := range res.Set.SLOs {
				a := s.Alerting
				ttft := s.Inference != nil && s.Inference.Role == "ttft"
				if ttft != (a.Backlog != nil) || ttft != (a.Shedding != nil) {
					t.Errorf("SLO %s: backlog %+v, shedding %+v", s.Name, a.Backlog, a.Shedding)
				}
			}
		})
	}
}
