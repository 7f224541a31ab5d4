package simulate

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// TestMain trades memory for speed: the simulations allocate many short-
// lived query results, and fewer collections halve the run time. No query
// is traced. The tests that replay call t.Parallel: most replay one SLO at
// a time, on one core, so two run side by side on a 2-core machine.
func TestMain(m *testing.M) {
	debug.SetGCPercent(400)
	prom.DisableTracing()
	os.Exit(m.Run())
}
