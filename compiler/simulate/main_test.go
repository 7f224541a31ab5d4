package simulate

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// TestMain trades memory for speed: the simulations allocate many short-
// lived query results, and fewer collections halve the run time. No query
// is traced.
func TestMain(m *testing.M) {
	debug.SetGCPercent(400)
	prom.DisableTracing()
	os.Exit(m.Run())
}
