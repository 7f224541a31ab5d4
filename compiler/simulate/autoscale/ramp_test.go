package autoscale

import (
	"testing"
	"time"
)

func TestReversalsCountOnlyScaleInsTheSLOPaidForAsFlaps(t *testing.T) {
	// Each case is replicas per step from the climb on; share is 1 (the
	// SLO broken) where slow is set, else 0.
	for _, c := range []struct {
		name     string
		replicas []int
		slow     []bool
		n, flaps int
	}{
		{"a fleet that only grows has no reversal", []int{2, 4, 8, 8, 16}, nil, 0, 0},
		{"an overshoot settled while the SLO holds is a reversal, not a flap", []int{2, 16, 16, 10, 12}, nil, 2, 0},
		{"a scale-in that breaks the SLO and is undone is a flap",
			[]int{2, 16, 16, 6, 6, 16}, []bool{false, false, false, false, true, false}, 2, 1},
		{"a break before the scale-in is not the scale-in's",
			[]int{2, 16, 6, 6, 16}, []bool{false, true, false, false, false}, 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var steps []FleetStep
			for i, r := range c.replicas {
				share := 0.0
				if i < len(c.slow) && c.slow[i] {
					share = 1
				}
				steps = append(steps, FleetStep{T: time.Duration(i+1) * HPASync, Replicas: []int{r}, Share: []float64{share}})
			}
			n, flaps, _ := Reversals(steps, 0, 0.01)
			if n != c.n || flaps != c.flaps {
				t.Errorf("Reversals %d, flaps %d; want %d and %d", n, flaps, c.n, c.flaps)
			}
		})
	}
}
