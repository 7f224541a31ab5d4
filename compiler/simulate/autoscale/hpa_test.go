package autoscale

import (
	"testing"
	"time"
)

func TestTheHPAsRatePoliciesBoundEachPeriodsChange(t *testing.T) {
	// One AverageValue trigger of target 1: the value is the replicas asked.
	load := Trigger{Name: "load", Average: true, Target: 1}
	for _, tt := range []struct {
		name     string
		a        Autoscaler
		from     int
		asks     []float64
		replicas []int
	}{
		{"the default scale-up doubles or adds 4 per 15s, the larger",
			Autoscaler{MaxReplicas: 100}, 2, []float64{40, 40, 40, 40}, []int{6, 12, 24, 40}},
		{"a policy of 2 pods per minute adds 2 a minute",
			Autoscaler{MaxReplicas: 100, ScaleUp: &Policies{Rules: []Policy{{Value: 2, Period: time.Minute}}}}, 2,
			[]float64{40, 40, 40, 40, 40}, []int{4, 4, 4, 4, 6}},
		{"Min picks the smaller of 100% and 1 pod per 15s",
			Autoscaler{MaxReplicas: 100, ScaleUp: &Policies{Select: "Min", Rules: []Policy{{Percent: true, Value: 100, Period: 15 * time.Second}, {Value: 1, Period: 15 * time.Second}}}}, 4,
			[]float64{40, 40}, []int{5, 6}},
		{"scale-down of 50% per minute halves at most once a minute",
			Autoscaler{MinReplicas: 1, MaxReplicas: 100, ScaleDown: &Policies{Rules: []Policy{{Percent: true, Value: 50, Period: time.Minute}}}}, 16,
			[]float64{1, 1, 1, 1, 1}, []int{8, 8, 8, 8, 4}},
		{"the scale-down window holds the highest ask younger than it",
			Autoscaler{MinReplicas: 1, MaxReplicas: 100, ScaleDownWindow: 30 * time.Second}, 10,
			[]float64{10, 2, 2, 2}, []int{10, 10, 2, 2}},
		{"Disabled never scales up",
			Autoscaler{MaxReplicas: 100, ScaleUp: &Policies{Select: "Disabled"}}, 3, []float64{40}, []int{3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.a.Triggers = []Trigger{load}
			s := &fleetSim{f: Fleet{Autoscaler: tt.a}, replicas: tt.from, failures: make([]int, 1)}
			for i, v := range tt.asks {
				s.sync(time.Duration(i)*HPASync, []float64{v})
				if s.replicas != tt.replicas[i] {
					t.Fatalf("sync %d: %d replicas, want %d (all: %v)", i, s.replicas, tt.replicas[i], tt.replicas)
				}
			}
		})
	}
}
