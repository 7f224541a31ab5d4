//go:build unix

package lint

import (
	"fmt"
	"os"
	"strings"
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

// BenchmarkLintFindings lints one rule file of n alerts that each have
// findings (a missing severity, a template reading a dropped label): the
// cost per finding must stay flat as n grows (it was quadratic).
func BenchmarkLintFindings(b *testing.B) {
	for _, n := range []int{10000, 40000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var sb strings.Builder
			sb.WriteString("groups:\n- name: g\n  rules:\n")
			for i := range n {
				fmt.Fprintf(&sb, "  - alert: A%d\n    expr: sum by (pod) (vllm:num_requests_waiting) > %d\n    annotations:\n      summary: \"{{ $labels.instance }}\"\n", i, i)
			}
			src := []Source{{Name: "many.yaml", Data: []byte(sb.String())}}
			start := cpuTime(b)
			runs := 0
			for b.Loop() {
				res, err := Run(src, Options{})
				if err != nil || len(res.Findings) != 2*n {
					b.Fatal(err, len(res.Findings))
				}
				runs++
			}
			b.ReportMetric((cpuTime(b)-start).Seconds()/float64(runs*2*n)*1e6, "cpu-µs/finding")
		})
	}
}
