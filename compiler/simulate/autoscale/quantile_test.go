package autoscale

import (
	"math"
	"testing"
)

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
