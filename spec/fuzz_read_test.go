package spec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/spec"
)

// FuzzSpecFileName reads a spec from a file whose name is arbitrary: the
// name reaches every generated header, so no name may add a YAML document,
// a line or a control character to an artifact, and reading may not panic.
func FuzzSpecFileName(f *testing.F) {
	good, err := os.ReadFile("../examples/chat.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range []string{
		"chat.yaml",
		"a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: kube-system}\n#.yaml",
		"chat\r\n# DO NOT EDIT.yaml",
		"chat\x1b[31mred.yaml",
		"chat\x00.yaml",
		"{{ $externalLabels }}.yaml",
		"$datasource.yaml",
		"..yaml",
		" .yaml",
	} {
		f.Add(name, good)
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 200 {
			return // not a file name the OS accepts
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return
		}
		t.Chdir(dir)
		res, err := spec.Load(".")
		if err != nil {
			return // a located refusal, such as a name that cannot be quoted
		}
		if res.Err() != nil {
			return
		}
		out, err := compiler.Compile(res.Set, compiler.Options{})
		if err != nil {
			if strings.Contains(err.Error(), "YAML documents") {
				t.Fatalf("file name %q injected a document: %v", name, err)
			}
			return
		}
		for _, a := range out.Files {
			for _, line := range strings.Split(string(a.Data), "\n") {
				if strings.ContainsAny(line, "\x00\x1b\r") {
					t.Fatalf("%s carries a control character from file name %q: %q", a.Path, name, line)
				}
			}
		}
	})
}
