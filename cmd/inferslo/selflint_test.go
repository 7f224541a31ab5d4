package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// specSets are the spec files and folders compiled on their own: every
// example and testdata spec but the bad ones.
func specSets(t *testing.T) []string {
	t.Helper()
	var sets []string
	for _, pattern := range []string{"../../examples/*.yaml", "../../examples/openslo/*.yaml", "../../testdata/engines/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, m...)
	}
	sets = append(sets, "../../testdata/fleet", "../../testdata/calendar", "../../testdata/timeslices")
	if len(sets) < 20 {
		t.Fatalf("found %d spec sets", len(sets))
	}
	return sets
}

// lintFindings runs lint and returns its errors and warnings.
func lintFindings(t *testing.T, paths ...string) []string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	run(append([]string{"lint", "--format", "json"}, paths...), &stdout, &stderr)
	var findings []struct {
		Check, Severity, File, Message string
		Line                           int
	}
	if err := json.Unmarshal(stdout.Bytes(), &findings); err != nil {
		t.Fatalf("lint's JSON: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var out []string
	for _, f := range findings {
		if f.Severity == "error" || f.Severity == "warning" {
			out = append(out, fmt.Sprintf("%s:%d: %s: %s (%s)", f.File, f.Line, f.Severity, f.Message, f.Check))
		}
	}
	return out
}

// TestLintFindsNothingInInferslosOwnOutput compiles every example and
// testdata spec with its promtool tests and lints the output beside its
// specs, then alone (as a pre-commit run staging only regenerated output
// does): no error and no warning either way.
func TestLintFindsNothingInInferslosOwnOutput(t *testing.T) {
	t.Parallel()
	for _, set := range specSets(t) {
		t.Run(strings.TrimPrefix(set, "../../"), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			if code := run([]string{"compile", set, "-o", out, "--tests"}, &stdout, &stderr); code != exitOK {
				t.Fatalf("compile exits %d:\n%s", code, stderr.String())
			}
			for _, paths := range [][]string{{set, out}, {out}} {
				if fs := lintFindings(t, paths...); len(fs) > 0 {
					t.Errorf("lint %s: %d findings:\n%s", strings.Join(paths, " "), len(fs), strings.Join(fs, "\n"))
				}
			}
		})
	}
}
