package simulate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/inferslo/inferslo/spec"
)

// TestRatioTimeSliceSLOsPassEveryScenario proves both time-slice methods
// over a ratio SLI (the threshold SLI is the bundled example): slices of
// 1m counted good or bad against timeSliceTarget, and slices of 2m whose
// error ratios are averaged. Day/night compares the SLO-window ratio with
// the slices counted from the requests sent.
func TestRatioTimeSliceSLOsPassEveryScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates days of traffic")
	}
	const specs = `apiVersion: openslo/v1
kind: SLO
metadata:
  name: api-minutes
  annotations: {inferslo.dev/scrape-interval: 15s}
spec:
  service: api
  indicatorRef: api-errors
  budgetingMethod: Timeslices
  timeWindow: [{duration: 30d, isRolling: true}]
  objectives: [{target: 0.99, timeSliceTarget: 0.95, timeSliceWindow: 1m}]
---
apiVersion: openslo/v1
kind: SLO
metadata:
  name: api-mean
spec:
  service: api
  indicatorRef: api-errors
  budgetingMethod: RatioTimeslices
  timeWindow: [{duration: 30d, isRolling: true}]
  objectives: [{target: 0.99, timeSliceWindow: 2m}]
---
apiVersion: openslo/v1
kind: SLI
metadata: {name: api-errors}
spec:
  ratioMetric:
    counter: true
    bad: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total{job="api",code=~"5.."})'}}}
    total: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total{job="api"})'}}}
`
	path := filepath.Join(t.TempDir(), "api.yaml")
	if err := os.WriteFile(path, []byte(specs), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := spec.Load(path)
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
