package spec_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/spec"
	"gopkg.in/yaml.v3"
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
			if p.File != "fuzz.yaml" || p.Line <= 0 || p.Message == "" {
				t.Fatalf("unlocated problem: %+v", p)
			}
		}
		if res.Err() != nil {
			return
		}
		out, err := compiler.Compile(res.Set, compiler.Options{})
		if err != nil {
			t.Fatalf("a spec without problems failed to compile: %v", err)
		}
		// Compile counts documents by their marker lines; a full parse
		// holds that count and the encoders to valid YAML.
		for _, f := range out.Files {
			if ext := filepath.Ext(f.Path); ext != ".yaml" && ext != ".yml" {
				continue
			}
			dec := yaml.NewDecoder(bytes.NewReader(f.Data))
			n := 0
			for {
				var doc yaml.Node
				err := dec.Decode(&doc)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("generated %s is not valid YAML: %v", f.Path, err)
				}
				n++
			}
			if n != 1 {
				t.Fatalf("generated %s holds %d YAML documents", f.Path, n)
			}
		}
	})
}
