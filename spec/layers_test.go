package spec

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/inferslo/inferslo/"

// imports lists, per package folder below root (relative to the module),
// the module's packages its non-test files import.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(filepath.Join("..", root), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "testdata") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel("..", filepath.Dir(p))
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if rest, ok := strings.CutPrefix(path, module); ok {
				out[filepath.ToSlash(dir)] = append(out[filepath.ToSlash(dir)], rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The data flows files -> spec -> model -> backends: the front end may use
// the model and the PromQL leaf below it, never a backend, and the model
// and the leaf use nothing above them. In the simulation, the in-memory
// Prometheus lies below the workload, and both below the proofs, cost and
// the review timeline.
func TestLayersImportOnlyWhatLiesBelowThem(t *testing.T) {
	// What every backend may read: the model, the PromQL leaf, the engine
	// catalog, the output files and the templates; never another backend.
	backend := func(self string) []string {
		return []string{self, "compiler/artifact", "compiler/model", "compiler/query", "spec/engine", "templates"}
	}
	tests := []struct {
		name    string
		root    string
		allowed []string
	}{
		{"the rules backend imports no other backend", "compiler/rules", backend("compiler/rules")},
		{"the dashboards backend imports no other backend", "compiler/grafana", backend("compiler/grafana")},
		{"the autoscaler backend imports no other backend", "compiler/keda", backend("compiler/keda")},
		{"the inhibition backend imports no other backend", "compiler/alertmanager", backend("compiler/alertmanager")},
		{"the analysis-template backend imports no other backend", "compiler/argo", backend("compiler/argo")},
		{"the front end imports only itself, the model, the PromQL leaf and the safe-text leaf", "spec", []string{"spec", "compiler/model", "compiler/query", "compiler/safetext"}},
		{"the model imports only itself and the PromQL leaf", "compiler/model", []string{"compiler/model", "compiler/query"}},
		{"the PromQL leaf imports nothing of inferslo", "compiler/query", nil},
		{"the safe-text leaf imports nothing of inferslo", "compiler/safetext", nil},
		{"the ruler table imports nothing of inferslo", "compiler/ruler", nil},
		{"the in-memory Prometheus imports no workload, prediction, proof or review code", "compiler/simulate/prom",
			[]string{"compiler/simulate/prom", "compiler/model", "compiler/query", "compiler/artifact", "spec/input"}},
		{"the synthetic series read only the model, the PromQL leaf and the engine catalog", "compiler/simulate/synth",
			[]string{"compiler/simulate/synth", "compiler/model", "compiler/query", "spec/engine"}},
		{"the workload driver imports only the synthetic series and the in-memory Prometheus of the simulation", "compiler/simulate/workload",
			[]string{"compiler/simulate/workload", "compiler/simulate/synth", "compiler/simulate/prom", "compiler/model", "compiler/query", "spec/engine"}},
		{"the generated promtool tests read the synthetic series, never the in-memory Prometheus (compile links no TSDB)", "compiler/promtest",
			[]string{"compiler/promtest", "compiler/simulate/synth", "compiler/rules", "compiler/artifact", "compiler/model", "compiler/query", "templates"}},
		{"the workbook's predictions read only the model", "compiler/simulate/predict", []string{"compiler/model"}},
		{"the autoscaler fleet imports the in-memory Prometheus, the workload and the KEDA backend it drives, never the proofs", "compiler/simulate/autoscale",
			[]string{"compiler/simulate/autoscale", "compiler/simulate/prom", "compiler/simulate/synth", "compiler/simulate/workload", "compiler/simulate/predict", "compiler/keda", "compiler/model", "compiler/query", "compiler/artifact", "compiler/rules"}},
		{"rule cost imports no proof or review code", "compiler/simulate/cost",
			[]string{"compiler/simulate/cost", "compiler/simulate/prom", "compiler/simulate/synth", "compiler/simulate/workload", "compiler/model", "compiler/query", "compiler/rules", "templates"}},
		{"the review timeline imports the simulation's Prometheus, workload and predictions, never the proofs", "compiler/review/timeline",
			[]string{"compiler/review/timeline", "compiler/simulate/prom", "compiler/simulate/synth", "compiler/simulate/workload", "compiler/simulate/predict", "compiler/model", "compiler/query", "compiler/rules"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found := imports(t, tt.root)
			if len(found) == 0 && tt.allowed != nil {
				t.Fatalf("no package below %s imports anything of inferslo; is the walk reading the right folder?", tt.root)
			}
			for dir, ims := range found {
				for _, im := range ims {
					ok := false
					for _, a := range tt.allowed {
						ok = ok || im == a || strings.HasPrefix(im, a+"/")
					}
					if !ok {
						t.Errorf("%s imports %s; allowed: %v", dir, im, tt.allowed)
					}
				}
			}
		})
	}
}

// Below compiler/, only the callers of the front end (lint reads specs
// beside rules, review renders them, the controller reads InferenceSLO
// objects) and the tests' shared fixtures
// (bench, slotest) import it; backends read the model.
func TestOnlyFrontEndCallersBelowCompilerImportSpec(t *testing.T) {
	callers := map[string]bool{"compiler/lint": true, "compiler/review": true, "compiler/internal/bench": true, "compiler/internal/slotest": true, "compiler/kube/controller": true}
	checked := 0
	for dir, ims := range imports(t, "compiler") {
		for _, im := range ims {
			checked++
			if im == "spec" && !callers[dir] {
				t.Errorf("%s imports spec; backends read compiler/model instead", dir)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no imports found below compiler/")
	}
}

// A file a newcomer reads should fit in one sitting: code past 600 lines
// goes into a file named for what it holds.
func TestNoSourceFileIsLongerThan600Lines(t *testing.T) {
	files := 0
	for _, root := range []string{"cmd", "spec", "compiler", "templates"} {
		err := filepath.WalkDir(filepath.Join("..", root), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			if n := bytes.Count(data, []byte("\n")); n > 600 {
				t.Errorf("%s has %d lines; split it by subject", p, n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 50 {
		t.Fatalf("read only %d source files; is the walk reading the right folders?", files)
	}
}
