package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryBadSpecMeetsEveryFurtherCheckWithoutACrash runs each spec of
// testdata/bad through the checks a flag adds to loading (a ruler's,
// a scrape's, the promtool tests'), which also see SLOs whose spec has
// errors: each must end in problems or a pass, never a crash.
func TestEveryBadSpecMeetsEveryFurtherCheckWithoutACrash(t *testing.T) {
	bad, err := filepath.Glob("../../testdata/bad/*.yaml")
	if err != nil || len(bad) == 0 {
		t.Fatalf("no bad specs: %v", err)
	}
	variants := [][]string{
		{"validate", "--ruler", "mimir"},
		{"validate", "--ruler", "vmalert"},
		{"validate", "--ruler", "thanos", "--max-rules-per-group", "3"},
		{"validate", "--tests", "--metrics", "../../testdata/scrapes/vllm-custom-buckets.prom"},
		{"compile", "--check", "--ruler", "cortex", "-o", "does-not-exist"},
		{"plan"},
		{"export"},
	}
	for _, v := range variants {
		t.Run(strings.Join(v, " "), func(t *testing.T) {
			t.Parallel()
			for _, f := range bad {
				code, out := runCaught(append(append([]string{}, v...), f))
				if code != exitOK && code != exitProblems {
					t.Errorf("%s: exit %d, want %d or %d:\n%s", filepath.Base(f), code, exitOK, exitProblems, out)
				}
			}
		})
	}
}

// runCaught runs a command line in process and turns a panic into exit -1.
func runCaught(args []string) (code int, out string) {
	var b bytes.Buffer
	defer func() {
		if r := recover(); r != nil {
			code, out = -1, fmt.Sprintf("panic: %v\n%s", r, b.String())
		}
	}()
	return run(args, &b, &b), b.String()
}
