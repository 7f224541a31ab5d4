package compiler

import (
	"runtime/debug"
	"testing"
)

// TestTuneGCSetsTheCollectorAndRestoresIt holds TuneGC to the settings it
// documents, to leaving GOGC and GOMEMLIMIT alone when they are set, and
// to restoring what it changed.
func TestTuneGCSetsTheCollectorAndRestoresIt(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
	for _, tc := range []struct {
		name, gogc, gomemlimit string
		percent                int
		limit                  int64
	}{
		{"unset, both are set", "", "", 400, MemoryLimit(10000)},
		{"with GOGC set, only the limit is set", "50", "", 100, MemoryLimit(10000)},
		{"with GOMEMLIMIT set, only the percentage is set", "", "1GiB", 400, 1 << 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", tc.gomemlimit)
			restore := TuneGC(10000)
			percent, limit := debug.SetGCPercent(400), debug.SetMemoryLimit(-1)
			debug.SetGCPercent(percent)
			restore()
			if percent != tc.percent || limit != tc.limit {
				t.Errorf("tuned to %d%% and %d bytes, want %d%% and %d bytes", percent, limit, tc.percent, tc.limit)
			}
			if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || l != 1<<40 {
				t.Errorf("restored to %d%% and %d bytes, want 100%% and %d bytes", p, l, int64(1<<40))
			}
		})
	}
	if got := MemoryLimit(10000); got/(1<<20) != 213 {
		t.Errorf("MemoryLimit(10000) = %d MiB, want 213", got/(1<<20))
	}
}
