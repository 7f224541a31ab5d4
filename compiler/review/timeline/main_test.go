package timeline

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain trades memory for speed: the simulations allocate many short-
// lived query results, and fewer collections halve the run time.
func TestMain(m *testing.M) {
	debug.SetGCPercent(400)
	os.Exit(m.Run())
}
