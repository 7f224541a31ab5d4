package compiler_test

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/bench"
	"github.com/inferslo/inferslo/spec"
)

func TestTmpLive(t *testing.T) {
	src := bench.Fleet(10000)
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc
	res, _ := spec.Parse(src...)
	runtime.GC()
	runtime.ReadMemStats(&m)
	fmt.Println("live after parse MB", float64(m.HeapAlloc-base)/1e6)
	f, _ := os.Create("/tmp/co/live.prof")
	pprof.Lookup("heap").WriteTo(f, 0)
	f.Close()
	set := res.Set
	res = spec.Result{}
	runtime.GC()
	runtime.ReadMemStats(&m)
	fmt.Println("live set only MB", float64(m.HeapAlloc-base)/1e6, len(set.SLOs))
}
