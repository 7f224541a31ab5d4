package simulate

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/bench"
	"github.com/inferslo/inferslo/compiler/internal/slotest"
)

// BenchmarkTest replays every scenario of a generated fleet's SLOs (vLLM
// TTFT, ITL and errors, one service per three) as `inferslo test` does, on
// every core. It reports CPU seconds per SLO and the peak heap, which must
// not grow with the number of SLOs: services are built and replayed a few
// at a time, under the memory limit `inferslo test` sets.
func BenchmarkTest(b *testing.B) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(MemoryLimit(runtime.GOMAXPROCS(0))))
	for _, n := range []int{3, 12} {
		b.Run(fmt.Sprintf("slos=%d", n), func(b *testing.B) {
			set := bench.FleetSet(b, n)
			bench.Measure(b, n, func(int) {
				r, err := Run(set, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Error(); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkTestExamples replays every scenario of every example SLO, as
// `inferslo test examples` does, and reports CPU seconds per SLO (the goal
// is 0.5) and the peak heap. Run it with -benchtime=1x: one op replays all
// of them.
func BenchmarkTestExamples(b *testing.B) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(MemoryLimit(runtime.GOMAXPROCS(0))))
	set := slotest.Examples(b).Set
	bench.Measure(b, len(set.SLOs), func(int) {
		r, err := Run(set, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Error(); err != nil {
			b.Fatal(err)
		}
	})
}
