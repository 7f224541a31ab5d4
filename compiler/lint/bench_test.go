//go:build unix

package lint

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"
)

// BenchmarkLint1000RuleFiles lints 1,000 rule files of 12 rules each. Run
// it on one core (-cpu 1); cpu-s/op is the process CPU time per run, which
// stays meaningful when other work shares the machine.
func BenchmarkLint1000RuleFiles(b *testing.B) {
	clean, err := os.ReadFile("testdata/clean/vllm.rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	sources := make([]Source, 1000)
	for i := range sources {
		sources[i] = Source{Name: fmt.Sprintf("rules/%04d.yaml", i), Data: clean}
	}
	start := cpuTime(b)
	n := 0
	for b.Loop() {
		res, err := Run(sources, Options{})
		if err != nil || len(res.Findings) != 0 {
			b.Fatal(err, len(res.Findings))
		}
		n++
	}
	b.ReportMetric((cpuTime(b)-start).Seconds()/float64(n), "cpu-s/op")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
