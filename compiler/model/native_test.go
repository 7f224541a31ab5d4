package model

import (
	"math"
	"testing"
)

func TestNativeBucketFindsTheBoundsAndTellsBoundaries(t *testing.T) {
	tests := []struct {
		name         string
		v            float64
		schema       int
		lower, upper float64
		boundary     bool
	}{
		{"a power of two is a boundary at schema 3", 0.5, 3, math.Exp2(-1 - 1.0/8), 0.5, true},
		{"a power of two is a boundary at schema 0", 0.25, 0, 0.125, 0.25, true},
		{"300ms sits inside a bucket at schema 3", 0.3, 3, math.Exp2(-14.0 / 8), math.Exp2(-13.0 / 8), false},
		{"2^(1/8) is a boundary at schema 3 but not at 2", math.Exp2(1.0 / 8), 2, 1, math.Exp2(1.0 / 4), false},
		{"schema -1 has boundaries at powers of four", 2, -1, 1, 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lower, upper, boundary := NativeBucket(tt.v, tt.schema)
			if math.Abs(lower-tt.lower) > 1e-12 || math.Abs(upper-tt.upper) > 1e-12 || boundary != tt.boundary {
				t.Errorf("NativeBucket(%v, %d) = (%v, %v, %t), want (%v, %v, %t)", tt.v, tt.schema, lower, upper, boundary, tt.lower, tt.upper, tt.boundary)
			}
		})
	}
}
