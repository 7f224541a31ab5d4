package promtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// sheddingSpec is a TTFT SLO per model whose load shedding holds for 2m
// (the spike case) and whose context reduction holds for one scrape.
const sheddingSpec = `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fleet}
spec:
  engine: vllm
  groupBy: [model_name]
  window: 7d
  objectives:
    - {sli: ttft, threshold: 250ms, target: 99%}
  alerting:
    loadShedding:
      shed:
        above: "3"
        for: 2m
      reduceContext:
        above: "1.5"
        for: 10s
`

// sheddingOnly writes the shedding tests of the test file generated for
// the spec into a file of their own beside the rules (the burn tests would
// only slow the run) and runs them, returning the failures by test name.
func sheddingOnly(t *testing.T, edit func([]byte) []byte) (names []string, fails string) {
	t.Helper()
	dir, tests := writeOut(t, parseSet(t, sheddingSpec), edit)
	var f File
	if err := yaml.Unmarshal(tests[0].Data, &f); err != nil {
		t.Fatal(err)
	}
	var kept []Test
	for _, tg := range f.Tests {
		if len(tg.PromQLTests) > 0 {
			kept = append(kept, tg)
			names = append(names, tg.Name)
		}
	}
	f.Tests = kept
	data, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "prometheus", "shedding.test.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		promtool(t, path)
	}
	return names, strings.Join(runTests(t, filepath.Dir(path), path), "\n")
}

func TestTheSheddingSignalsTestsPassOnTheGeneratedRules(t *testing.T) {
	t.Parallel()
	names, fails := sheddingOnly(t, nil)
	if len(names) != 2 {
		t.Fatalf("shedding tests %q, want one per signal", names)
	}
	for _, want := range []string{"load shedding starts once TTFT p99 has stayed above 3× the threshold (0.75) for 2m",
		"context reduction starts once TTFT p99 has stayed above 1.5× the threshold (0.375) for 10s", "fleet-ttft-b stays calm"} {
		if !strings.Contains(strings.Join(names, "\n"), want) {
			t.Errorf("no test saying %q in %q", want, names)
		}
	}
	if fails != "" {
		t.Fatalf("the shedding tests fail on the generated rules:\n%s", fails)
	}
}

func TestTheSheddingTestsFailOnWrongRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, from, to string
		// fails names the check that must fail: its expression and time.
		fails string
	}{
		{"shedding at the threshold itself fires while the quantile is only above the threshold",
			`le="0.75"`, `le="0.25"`, "inferslo:load_shed:active{slo=\"fleet-ttft\"} at 8m"},
		{"a hold of one scrape sheds during a spike shorter than the hold",
			"[2m:30s]", "[30s:30s]", "inferslo:load_shed:active{slo=\"fleet-ttft\"} at"},
		{"a share counted too high never sheds",
			"/ 0.25 / on (model_name)", "/ 0.0001 / on (model_name)", "inferslo:context_reduce:active{slo=\"fleet-ttft\"} at"},
		{"a bound interpolated without the bucket below it sheds while calm",
			"(0.125 * sum by (model_name)", "(0 * sum by (model_name)", "inferslo:context_reduce:active{slo=\"fleet-ttft\"} at"},
		{"dividing by every model's requests sheds the calm model too",
			"/ sum by (model_name) (rate(vllm:time_to_first_token_seconds_count[2m]))",
			"/ ignoring (model_name) group_left () sum(rate(vllm:time_to_first_token_seconds_count[2m]))", "load_shed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, fails := sheddingOnly(t, func(b []byte) []byte {
				if !bytes.Contains(b, []byte(c.from)) {
					t.Fatalf("no %q in the rules:\n%s", c.from, b)
				}
				return bytes.ReplaceAll(b, []byte(c.from), []byte(c.to))
			})
			if !strings.Contains(fails, c.fails) {
				t.Errorf("no failure of %q; failures:\n%s", c.fails, fails)
			}
		})
	}
}
