package model

import "math"

// Native schemas Prometheus stores: bucket boundaries are 2^(k·2^-schema).
const (
	MinNativeSchema = -4
	MaxNativeSchema = 8
	// DefaultNativeSchema is the schema assumed for a native histogram when the
	// spec names none. OpenTelemetry SDKs start exponential histograms at
	// scale 20 and shrink the scale until the observed range fits in 160
	// buckets: a latency range of 1ms to 10s (13.3 powers of two) fits at
	// scale 3 (107 buckets) and not at 4 (213). Prometheus client_golang's
	// bucket factor 1.1 is schema 3 as well.
	DefaultNativeSchema = 3
)

// NativeBucket finds the bucket of a native histogram of the given schema
// that holds v (> 0): its bounds, and whether v is its upper bound, where
// histogram_fraction counts exactly. Buckets hold (lower, upper].
func NativeBucket(v float64, schema int) (lower, upper float64, boundary bool) {
	perDoubling := math.Exp2(float64(schema))
	x := math.Log2(v) * perDoubling
	k := math.Ceil(x)
	if r := math.Round(x); math.Abs(x-r) < 1e-9 {
		k, boundary = r, true
	}
	return math.Exp2((k - 1) / perDoubling), math.Exp2(k / perDoubling), boundary
}
