package promtest

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestNativeHistogramTestsFeedHistogramsAndFailWhenTheThresholdMoves runs
// the tests of the OpenTelemetry example on native histograms: the inputs
// are native histogram samples, the burn tests expect alerts, and with the
// rules' threshold moved below the good requests' bucket the tests fail.
func TestNativeHistogramTestsFeedHistogramsAndFailWhenTheThresholdMoves(t *testing.T) {
	t.Parallel()
	set := loadSet(t, "../../examples/otel-native.yaml")
	dir, tests := writeOut(t, set, nil)
	text := string(tests[0].Data)
	for _, want := range []string{
		"gen_ai_server_time_to_first_token_seconds{gen_ai_request_model=\"llama-3.1-70b-instruct\", pod=\"sim-0\"}",
		"{{schema:3 count:0 sum:0 offset:-8 buckets:[0 0]}}+{{schema:3 count:",
		"slo: otel-assistant-ttft",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("test file lacks %q:\n%s", want, text)
		}
	}
	path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	// The TTFT SLO's groups are the ones fed native histograms; the errors
	// SLO's read counters, as every other example's do.
	mustPass(t, filepath.Dir(path), path, testGroupsOf(t, tests[0].Data, "otel-assistant-ttft")...)

	// 0.25s is below the good requests' bucket (0.458s, 0.5s]: every
	// request then counts as slow, and the half-budget test pages.
	dir, tests = writeOut(t, set, func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("histogram_fraction(0, 0.5,"), []byte("histogram_fraction(0, 0.25,"))
	})
	path = filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	const name = "otel-assistant-ttft: the page alert is silent at half the budget rate"
	fails := runTests(t, filepath.Dir(path), path, name)
	if !strings.Contains(strings.Join(fails, "\n"), name) {
		t.Errorf("the tests did not fail on rules whose threshold moved:\n%s", strings.Join(fails, "\n"))
	}
}
