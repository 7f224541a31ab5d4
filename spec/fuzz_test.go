package spec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/spec"
)

// FuzzParseAndCompile feeds arbitrary specs through decoding, validation and
// every backend: no input may panic, every problem must be located, and a
// spec that loads without errors must compile to artifacts that validate.
func FuzzParseAndCompile(f *testing.F) {
	for _, glob := range []string{"../examples/*.yaml", "../examples/*/*.yaml", "../testdata/bad/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := spec.Parse(spec.Source{Name: "fuzz.yaml", Data: data})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Problems {
			if p.File != "fuzz.yaml" || p.Message == "" {
				t.Fatalf("unlocated problem: %+v", p)
			}
		}
		if res.Err() != nil {
			return
		}
		if _, err := compiler.Compile(res.Set, compiler.Options{}); err != nil {
			t.Fatalf("a spec without problems failed to compile: %v", err)
		}
	})
}
