package spec_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/spec"
)

var update = flag.Bool("update", false, "rewrite the expected problems of testdata/bad")

// TestBadInputsReportLocatedProblems loads every spec of the bad-input
// corpus and compares its problems with the .err file beside it. Each
// problem must name a line and, past the file level, a property path.
func TestBadInputsReportLocatedProblems(t *testing.T) {
	t.Chdir("..")
	cases, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no bad-input cases: %v", err)
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c), ".yaml"), func(t *testing.T) {
			res, err := spec.Load(c)
			if err != nil {
				t.Fatal(err)
			}
			warningOnly := strings.HasPrefix(filepath.Base(c), "warning-")
			if errs := res.Problems.Errors(); warningOnly != (len(errs) == 0) {
				t.Fatalf("errors = %v; a warning- case must load and every other case must fail", errs)
			}
			if len(res.Problems) == 0 {
				t.Fatal("no problem reported")
			}
			var got strings.Builder
			for _, p := range res.Problems {
				if p.Line == 0 {
					t.Errorf("problem without a line: %s", p)
				}
				if p.Path == "" && !strings.Contains(p.Message, "YAML") {
					t.Errorf("problem without a property path: %s", p)
				}
				got.WriteString(p.String() + "\n" + p.Snippet())
			}
			want := strings.TrimSuffix(c, ".yaml") + ".err"
			if *update {
				if err := os.WriteFile(want, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run go test ./spec -update)", err)
			}
			if got.String() != string(b) {
				t.Errorf("problems differ from %s\n got:\n%s\nwant:\n%s", want, got.String(), b)
			}
		})
	}
}
