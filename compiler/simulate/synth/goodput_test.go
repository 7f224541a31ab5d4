package synth

import (
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

func TestAGoodputWorkloadMissesEachLatencyThresholdForHalfItsBadEvents(t *testing.T) {
	res, err := spec.Load("../../../examples/code-completion.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	bySLI := map[string]model.SLO{}
	for _, s := range res.Set.SLOs {
		bySLI[model.SLIName(s)] = s
	}
	w, err := New(bySLI[model.SLIGoodput], Shape{Pods: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Per pod: the goodput SLO counts n events and k bad ones (New
	// checked it); each latency SLO, read over the same series, n requests
	// of which n - k/2 are fast.
	for _, role := range []string{"ttft", "tpot"} {
		slo := bySLI[role]
		totalN, totalK, err := w.form(slo.SLI.Total.Expr)
		if err != nil {
			t.Fatal(err)
		}
		goodN, goodK, err := w.form(slo.SLI.Good.Expr)
		if err != nil {
			t.Fatal(err)
		}
		if totalN != 1 || totalK != 0 || goodN != 1 || goodK != -0.5 {
			t.Errorf("%s over the goodput series: total = %gn%+gk, good = %gn%+gk; want 1n and 1n-0.5k", role, totalN, totalK, goodN, goodK)
		}
	}
}
