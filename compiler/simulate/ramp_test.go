package simulate

import (
	"math"
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
				steps = append(steps, FleetStep{T: time.Duration(i+1) * hpaSync, Replicas: []int{r}, Share: []float64{share}})
			}
			n, flaps, _ := reversals(steps, 0, 0.01)
			if n != c.n || flaps != c.flaps {
				t.Errorf("reversals %d, flaps %d; want %d and %d", n, flaps, c.n, c.flaps)
			}
		})
	}
}

func TestTheScrapeQuantileInterpolatesWithinItsBucketAsHistogramQuantileDoes(t *testing.T) {
	inf := math.Inf(1)
	bounds := []float64{0.1, 0.25, 0.5, inf}
	before := []float64{10, 20, 30, 30}
	for _, c := range []struct {
		name  string
		after []float64
		q     float64
		want  float64
	}{
		// 100 new requests: 90 under 0.1s, 10 between 0.25s and 0.5s.
		{"p99 halfway into the bucket holding the slowest 10", []float64{100, 110, 130, 130}, 0.95, 0.375},
		{"p50 within the first bucket", []float64{100, 110, 130, 130}, 0.5, 0.1 * 50 / 90},
		{"a quantile among the +Inf bucket reads the highest finite bound", []float64{10, 20, 30, 130}, 0.99, 0.5},
	} {
		if got := scrapeQuantile(c.q, bounds, before, c.after); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := scrapeQuantile(0.99, bounds, before, before); !math.IsNaN(got) {
		t.Errorf("no new requests: %v, want NaN", got)
	}
}
