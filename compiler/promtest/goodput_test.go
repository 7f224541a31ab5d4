package promtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const goodputSpec = `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  selector: {model_name: m}
  window: 28d
  objectives:
    - {sli: ttft, threshold: 250ms, target: 99%}
    - {sli: tpot, threshold: 50ms, target: 99%}
    - {sli: errors, target: 99.9%}
`

func TestGoodputBoundTestsFailWhenABoundIsEdited(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		fail string // a failing test's name; empty: all pass
	}{
		// The passing case is TestEveryExampleServiceGetsPassingTests'
		// (examples/code-completion.yaml has a pair).
		{"a lower bound off by half fails it", func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`clamp_min(1 - (`), []byte(`clamp_min(0.5 - (`))
		}, "goodput lies between"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, tests := writeOut(t, parseSet(t, goodputSpec), tc.edit)
			path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
			// Only the bounds test runs: the burn tests are proven elsewhere.
			var f File
			if err := yaml.Unmarshal(tests[0].Data, &f); err != nil {
				t.Fatal(err)
			}
			var kept []Test
			for _, tg := range f.Tests {
				if strings.Contains(tg.Name, "goodput lies") {
					kept = append(kept, tg)
				}
			}
			if len(kept) != 1 {
				t.Fatalf("%d goodput bounds tests written, want 1", len(kept))
			}
			f.Tests = kept
			data, err := yaml.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			fails := strings.Join(runTests(t, filepath.Dir(path), path), "\n")
			if tc.fail == "" && fails != "" || tc.fail != "" && !strings.Contains(fails, tc.fail) {
				t.Errorf("failures:\n%s\nwant one naming %q", fails, tc.fail)
			}
		})
	}
}
