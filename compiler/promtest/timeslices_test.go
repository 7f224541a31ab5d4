package promtest

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestRatioTimeSliceTestsPassAndCatchAWrongSliceTarget generates the tests
// of a Timeslices and a RatioTimeslices SLO over one ratio SLI: both pass on
// the generated rules, and a slice target lowered until the test's slices
// count as good makes the every-slice-bad test fail.
func TestRatioTimeSliceTestsPassAndCatchAWrongSliceTarget(t *testing.T) {
	t.Parallel()
	set := loadSet(t, "../../testdata/timeslices/api-errors.yaml")
	dir, tests := writeOut(t, set, nil)
	text := string(tests[0].Data)
	for _, want := range []string{"api-minutes: the page alert fires when every 1m slice is bad", "api-mean: the page alert fires during a 20x burn"} {
		if !strings.Contains(text, want) {
			t.Errorf("test file lacks %q", want)
		}
	}
	testPath := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	mustPass(t, filepath.Dir(testPath), testPath)

	dir, tests = writeOut(t, set, func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("< bool 0.95"), []byte("< bool 0.4")) })
	testPath = filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	const name = "api-minutes: the page alert fires when every 1m slice is bad"
	fails := runTests(t, filepath.Dir(testPath), testPath, name)
	if !strings.Contains(strings.Join(fails, "\n"), name) {
		t.Errorf("a slice target of 40%% did not fail the every-slice-bad test; failures:\n%s", strings.Join(fails, "\n"))
	}
}
