package engine

import (
	"math"
)

// UnitOrSeconds is the histogram's unit, seconds unless stated.
func (h *Histogram) UnitOrSeconds() string {
	if h.Unit == "" {
		return Seconds
	}
	return h.Unit
}

// Scale is how many of the histogram's units make one second.
func (h *Histogram) Scale() float64 {
	if h.Unit == Milliseconds {
		return 1000
	}
	return 1
}

// Bucket finds the bucket whose upper bound equals seconds once converted
// to the histogram's unit, comparing as numbers (Prometheus 3 writes
// le="1.0" where an exporter wrote "1"); it returns the bound in the
// histogram's unit, the value of le.
func (h *Histogram) Bucket(seconds float64) (float64, bool) {
	native := seconds * h.Scale()
	for _, b := range h.Buckets {
		if nearlyEqual(b, native) {
			return b, true
		}
	}
	return 0, false
}

// Neighbours returns the closest bucket bounds below and above seconds, in
// seconds; a missing side is NaN.
func (h *Histogram) Neighbours(seconds float64) (below, above float64) {
	below, above = math.NaN(), math.NaN()
	native := seconds * h.Scale()
	for _, b := range h.Buckets {
		if b < native && !nearlyEqual(b, native) {
			below = b / h.Scale()
		} else if b > native && !nearlyEqual(b, native) && math.IsNaN(above) {
			above = b / h.Scale()
		}
	}
	return below, above
}

func nearlyEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func hasDuplicate(fs []float64) bool {
	for i := 1; i < len(fs); i++ {
		if fs[i] == fs[i-1] {
			return true
		}
	}
	return false
}
