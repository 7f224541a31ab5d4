package lint_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/lint"
)

// FuzzLint lints arbitrary files of every kind the linter recognises: no
// input may panic, every finding must name the file and stay within it, and
// every output format must render the result.
func FuzzLint(f *testing.F) {
	for _, glob := range []string{"testdata/bad/*", "testdata/clean/*"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(filepath.Base(file), b)
		}
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") && !strings.HasSuffix(name, ".json") {
			name += ".yaml"
		}
		res, err := lint.Run([]lint.Source{{Name: name, Data: data}}, lint.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, fd := range res.Findings {
			if fd.File != name || fd.Message == "" || fd.Check == "" {
				t.Fatalf("finding without file, check or message: %+v", fd)
			}
			if fd.Line < 0 || fd.Line > lines {
				t.Fatalf("finding at line %d of a %d-line file: %+v", fd.Line, lines, fd)
			}
		}
		for _, format := range []string{"text", "json", "github", "sarif"} {
			if err := lint.Write(&bytes.Buffer{}, format, res); err != nil {
				t.Fatalf("format %s: %v", format, err)
			}
		}
	})
}
