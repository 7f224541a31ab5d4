// Package bench holds what the benchmarks of several packages share: a
// generated fleet of SLOs and a measurement of CPU time and peak heap.
package bench

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

// Fleet returns n SLOs as shorthand specs: one service per three SLOs (TTFT,
// ITL and errors on vLLM), every third one autoscaled, spread over files of
// 50 services as a team would keep them.
func Fleet(n int) []spec.Source {
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

// FleetSet is Fleet(n) resolved into SLOs.
func FleetSet(b *testing.B, n int) model.Set {
	b.Helper()
	res, err := spec.Parse(Fleet(n)...)
	if err != nil {
		b.Fatal(err)
	}
	if err := res.Err(); err != nil {
		b.Fatal(err)
	}
	return res.Set
}

// Measure runs f per iteration and reports, besides ns/op and allocations,
// CPU seconds per operation and per SLO, microseconds per SLO and the peak live heap
// (sampled every millisecond; B/op counts all allocation, freed or not).
func Measure(b *testing.B, n int, f func(i int)) {
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
	b.ReportMetric(cpu.Seconds()/float64(b.N)/float64(n), "cpu-s/SLO")
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
