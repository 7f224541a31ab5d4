package compiler_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/spec"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output")

// TestExamplesMatchGoldenFiles compiles the bundled examples and compares
// every artifact with testdata/golden; `go test ./compiler -update`
// refreshes them.
func TestExamplesMatchGoldenFiles(t *testing.T) {
	t.Chdir("..")
	res, err := spec.Load("examples")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("examples do not load:\n%v", err)
	}
	out, err := compiler.Compile(res.Set, compiler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files := out.Files
	golden := filepath.Join("testdata", "golden", "examples")
	if *update {
		if err := os.RemoveAll(golden); err != nil {
			t.Fatal(err)
		}
		if err := files.Write(golden, "compile"); err != nil {
			t.Fatal(err)
		}
		return
	}
	diff, err := files.Diff(golden, "compile")
	if err != nil {
		t.Fatal(err)
	}
	if len(diff) > 0 {
		t.Fatalf("output differs from %s (run go test ./compiler -update and read the diff):\n%s", golden, diff)
	}
}

// TestCompilingTwiceGivesTheSameBytes guards determinism: map order,
// float printing or time must never leak into artifacts.
func TestCompilingTwiceGivesTheSameBytes(t *testing.T) {
	t.Chdir("..")
	var outs [][]byte
	for range 3 {
		res, err := spec.Load("examples")
		if err != nil {
			t.Fatal(err)
		}
		out, err := compiler.Compile(res.Set, compiler.Options{})
		if err != nil {
			t.Fatal(err)
		}
		files := out.Files
		var all bytes.Buffer
		for _, f := range files {
			all.WriteString(f.Path + "\n")
			all.Write(f.Data)
		}
		outs = append(outs, all.Bytes())
	}
	for i := 1; i < len(outs); i++ {
		if !bytes.Equal(outs[0], outs[i]) {
			t.Fatal("two compilations of the same specs differ")
		}
	}
}
