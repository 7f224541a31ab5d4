package spec_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/OpenSLO/go-sdk/pkg/openslosdk"

	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/spec"
)

// TestExportedOpenSLOCompilesToTheSameRules exports each shorthand example
// and each spec of testdata/export, checks it with go-sdk, compiles it and
// compares the rule files byte for byte (but for the header line, which
// names the source file).
func TestExportedOpenSLOCompilesToTheSameRules(t *testing.T) {
	examples, err := filepath.Glob("../examples/*.yaml")
	more, _ := filepath.Glob("testdata/export/*.yaml")
	examples = append(examples, more...)
	if err != nil || len(more) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, ex := range examples {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			exported, problems, err := spec.Export(ex)
			if err != nil || len(problems.Errors()) > 0 {
				t.Fatalf("export: %v %v", err, problems)
			}
			objs, err := openslosdk.Decode(bytes.NewReader(exported), openslosdk.FormatYAML)
			if err != nil {
				t.Fatalf("go-sdk cannot decode the export: %v", err)
			}
			if err := openslosdk.Validate(objs...); err != nil {
				t.Fatalf("go-sdk rejects the export: %v", err)
			}
			if strings.Contains(string(exported), "InferenceSLO") {
				t.Fatal("the export still holds shorthand")
			}
			plain := filepath.Join(t.TempDir(), "plain.yaml")
			if err := os.WriteFile(plain, exported, 0o644); err != nil {
				t.Fatal(err)
			}
			want := compileRules(t, ex)
			got := compileRules(t, plain)
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("got %d rule files, want %d", len(got), len(want))
			}
			for i := range want {
				if body(got[i]) != body(want[i]) {
					t.Errorf("rules of the export differ from the shorthand's")
				}
			}
		})
	}
}

func compileRules(t *testing.T, path string) [][]byte {
	t.Helper()
	res, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	files, err := rules.Build(res.Set, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, f := range files {
		out = append(out, f.Data)
	}
	return out
}

func body(b []byte) string {
	_, rest, _ := strings.Cut(string(b), "\n")
	return rest
}

func TestExportKeepsTheGroupingOfAGroupedSLO(t *testing.T) {
	exported, problems, err := spec.Export("testdata/grouped.yaml")
	if err != nil || len(problems.Errors()) > 0 {
		t.Fatalf("export: %v %v", err, problems)
	}
	if !strings.Contains(string(exported), spec.AnnotationGroupBy+": model_name") {
		t.Fatalf("the export lacks the %s annotation:\n%s", spec.AnnotationGroupBy, exported)
	}
	plain := filepath.Join(t.TempDir(), "plain.yaml")
	if err := os.WriteFile(plain, exported, 0o644); err != nil {
		t.Fatal(err)
	}
	want := compileRules(t, "testdata/grouped.yaml")
	got := compileRules(t, plain)
	if len(want) != 1 || len(got) != 1 || body(got[0]) != body(want[0]) {
		t.Fatal("rules of the export differ from the shorthand's")
	}
	if !strings.Contains(string(want[0]), "sum by (model_name) (rate(") {
		t.Errorf("the rules do not keep model_name:\n%s", want[0])
	}
}
