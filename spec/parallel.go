package spec

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// eachIndex calls f(0) to f(n-1), on every core (GOMAXPROCS calls at
// once). f must write nothing but its own index's result.
func eachIndex(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}
