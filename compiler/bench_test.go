package compiler_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/spec"
)

// fleet returns n SLOs as shorthand specs: one service per three SLOs (TTFT,
// ITL and errors on vLLM), every third one autoscaled, spread over files of
// 50 services as a team would keep them.
func fleet(n int) []spec.Source {
	var sources []spec.Source
	var b strings.Builder
	flush := func(i int) {
		if b.Len() > 0 {
			sources = append(sources, spec.Source{Name: fmt.Sprintf("slos/team-%04d.yaml", i), Data: []byte(b.String())})
			b.Reset()
		}
	}
	services := (n + 2) / 3
	for i := range services {
		if i%50 == 0 {
			flush(i / 50)
		}
		fmt.Fprintf(&b, `---
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: svc-%05d}
spec:
  engine: vllm
  selector: {model_name: model-%05d}
  window: 28d
  objectives:
`, i, i)
		objectives := []string{
			"    - {sli: ttft, threshold: 250ms, target: 99%}\n",
			"    - {sli: itl, threshold: 50ms, target: 99%}\n",
			"    - {sli: errors, target: 99.9%}\n",
		}
		for j, o := range objectives {
			if 3*i+j < n {
				b.WriteString(o)
			}
		}
		b.WriteString("  alerting: {runbookURL: https://runbooks.example.com/llm}\n")
		if i%3 == 0 {
			fmt.Fprintf(&b, `  autoscaling:
    target: {kind: Deployment, name: vllm-%05d}
    namespace: llm
    minReplicas: 2
    maxReplicas: 64
    prometheus: http://prometheus-operated.monitoring:9090
    capacity: {peakRPS: "200", meanServiceTime: 2s, replicaConcurrency: "64"}
`, i)
		}
	}
	flush(services/50 + 1)
	return sources
}

// BenchmarkCompile parses, validates, compiles and writes a fleet of SLOs
// as `inferslo compile` does, each artifact staged as it is built. Besides
// time it reports CPU time (the figure that holds on a busy machine) and the
// peak heap.
func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("slos=%d", n), func(b *testing.B) {
			sources := fleet(n)
			dir := benchDir(b)
			measure(b, n, func(i int) {
				st, err := artifact.NewStage(filepath.Join(dir, fmt.Sprint(i)), "compile")
				if err != nil {
					b.Fatal(err)
				}
				compileFleetTo(b, sources, st.Add)
				if err := st.Commit(); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkCompileCheck is `inferslo compile --check` on an up-to-date
// output folder: compile, then compare instead of write.
func BenchmarkCompileCheck(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("slos=%d", n), func(b *testing.B) {
			sources := fleet(n)
			dir := filepath.Join(benchDir(b), "out")
			st, err := artifact.NewStage(dir, "compile")
			if err != nil {
				b.Fatal(err)
			}
			compileFleetTo(b, sources, st.Add)
			if err := st.Commit(); err != nil {
				b.Fatal(err)
			}
			measure(b, n, func(int) {
				cmp, err := artifact.NewComparison(dir, "compile")
				if err != nil {
					b.Fatal(err)
				}
				compileFleetTo(b, sources, cmp.Add)
				diff, err := cmp.Diff()
				if err != nil {
					b.Fatal(err)
				}
				if len(diff) > 0 {
					b.Fatalf("output is stale:\n%s", diff)
				}
			})
		})
	}
}

// benchDir is a fresh folder for a benchmark's output, below
// INFERSLO_BENCH_DIR when set. Creating a thousand files costs from 35 ms on
// a tmpfs to most of a second on a busy virtual disk: a tmpfs (/dev/shm)
// measures inferslo rather than the disk.
func benchDir(b *testing.B) string {
	root := os.Getenv("INFERSLO_BENCH_DIR")
	if root == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(root, "inferslo-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// BenchmarkValidate is `inferslo validate`: decode, expand, resolve and
// check every spec.
func BenchmarkValidate(b *testing.B) {
	const n = 10000
	sources := fleet(n)
	measure(b, n, func(int) {
		res, err := spec.Parse(sources...)
		if err != nil {
			b.Fatal(err)
		}
		if err := res.Err(); err != nil {
			b.Fatal(err)
		}
	})
}

// compileFleetTo compiles as the command does, each artifact to add.
func compileFleetTo(b *testing.B, sources []spec.Source, add func(artifact.File) error) {
	res, err := spec.Parse(sources...)
	if err != nil {
		b.Fatal(err)
	}
	if err := res.Err(); err != nil {
		b.Fatal(err)
	}
	if _, err := compiler.CompileTo(res.Set, compiler.Options{}, add); err != nil {
		b.Fatal(err)
	}
}

// measure runs f per iteration and reports, besides ns/op and allocations,
// CPU seconds per operation, microseconds per SLO and the peak live heap
// (sampled every millisecond; B/op counts all allocation, freed or not).
func measure(b *testing.B, n int, f func(i int)) {
	b.Helper()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	cpu0 := cpuTime()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		f(i)
	}
	cpu := cpuTime() - cpu0
	close(done)
	<-stopped
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/SLO")
	b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/1e6, "peak-heap-MB")
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
