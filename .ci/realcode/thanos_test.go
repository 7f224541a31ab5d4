package realcode

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/thanos-io/thanos/pkg/rules"
)

// thanosCheck is what `thanos tools rules-check --rules FILE` runs on each
// file (cmd/thanos/tools.go, checkRulesFiles): strict YAML into Thanos'
// rule groups (partial_response_strategy included), then Prometheus'
// validation of each group. It returns the number of rules.
func thanosCheck(data []byte) (int, error) {
	n, errs := rules.ValidateAndCount(bytes.NewReader(data))
	return n, errs.Err()
}

func TestThanosRuleCheckerAcceptsTheRulerFiles(t *testing.T) {
	for _, strategy := range []string{"", "warn", "abort"} {
		t.Run("partial_response_strategy="+strategy, func(t *testing.T) {
			var flags []string
			if strategy != "" {
				flags = []string{"--thanos-partial-response", strategy}
			}
			out := compiled(t, flags...)
			total := 0
			for _, f := range files(t, out, "ruler/*.yaml") {
				data := read(t, f)
				if strategy != "" && !bytes.Contains(data, []byte("partial_response_strategy: "+strategy)) {
					t.Fatalf("%s: no partial_response_strategy %s", f, strategy)
				}
				n, err := thanosCheck(data)
				if err != nil {
					t.Fatalf("%s: %v", filepath.Base(f), err)
				}
				if n == 0 {
					t.Fatalf("%s: no rules", filepath.Base(f))
				}
				total += n
			}
			t.Logf("thanos v0.42.4 rules-check: %d rules pass", total)
		})
	}
}

func TestThanosRuleCheckerRejectsABrokenRulerFile(t *testing.T) {
	out := compiled(t, "--thanos-partial-response", "warn")
	data := read(t, filepath.Join(out, "ruler", "chat.yaml"))
	broken := map[string][]byte{
		"an unknown strategy":  mutate(t, data, "partial_response_strategy: warn", "partial_response_strategy: sometimes"),
		"an unknown group key": mutate(t, data, "    interval: 1m\n", "    interval: 1m\n    intervals: 1m\n"),
		"an expression broken": mutate(t, data, "expr: sum(rate(", "expr: sum(rate(("),
	}
	for name, doc := range broken {
		if _, err := thanosCheck(doc); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
