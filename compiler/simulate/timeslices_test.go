package simulate

import (
	"testing"

	"github.com/inferslo/inferslo/compiler/simulate/cost"
	"github.com/inferslo/inferslo/spec"
)

// TestRatioTimeSliceSLOsPassEveryScenario proves both time-slice methods
// over a ratio SLI (the threshold SLI is the bundled example): slices of
// 1m counted good or bad against timeSliceTarget, and slices of 2m whose
// error ratios are averaged. Day/night compares the SLO-window ratio with
// the slices counted from the requests sent.
func TestRatioTimeSliceSLOsPassEveryScenario(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulates days of traffic")
	}
	res, err := spec.Load("../../testdata/timeslices/api-errors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	r, err := Run(res.Set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 24 {
		t.Errorf("%d checks, want 12 per SLO", len(r.Checks))
	}
	if err := r.Error(); err != nil {
		t.Fatal(err)
	}
}

// TestTheCostReportSkipsTimeSliceSLOsByName: the baseline rates raw series
// per window, which a percentile per slice has no form of; the report
// names the SLO instead of failing on it.
func TestTheCostReportSkipsTimeSliceSLOsByName(t *testing.T) {
	res, err := spec.Load("../../examples/openslo/ttft-timeslices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cost.Measure(res.Set, cost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0] != "chat-ttft-minutes" || rep.Inferslo.Rules != 0 {
		t.Errorf("skipped %v with %d rules measured, want chat-ttft-minutes alone and none measured", rep.Skipped, rep.Inferslo.Rules)
	}
}
