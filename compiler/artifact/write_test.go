package artifact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteReplacesTheFolderWithExactlyTheFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	first := Set{{Path: "prometheus/a.yaml", Data: []byte("a1")}, {Path: "prometheus/old.yaml", Data: []byte("x")}}
	if err := first.Write(dir, "compile"); err != nil {
		t.Fatal(err)
	}
	second := Set{{Path: "prometheus/a.yaml", Data: []byte("a2")}, {Path: "grafana/a.json", Data: []byte("{}")}}
	if err := second.Write(dir, "compile"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "prometheus/a.yaml")); got != "a2" {
		t.Errorf("a.yaml = %q, want a2", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "prometheus/old.yaml")); !os.IsNotExist(err) {
		t.Errorf("a file the new set does not hold survived: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("temporary folders left beside the output: %v", entries)
	}
}

func TestWriteRefusesAFolderItDidNotWrite(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Set{{Path: "a.yaml", Data: []byte("a")}}.Write(dir, "compile")
	if err == nil || !strings.Contains(err.Error(), "not written by inferslo") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if got := read(t, filepath.Join(dir, "notes.md")); got != "mine" {
		t.Errorf("the folder was touched: %q", got)
	}
}

func TestAFailedWriteLeavesTheOldOutputAndNoTemporaryFolder(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := (Set{{Path: "a.yaml", Data: []byte("old")}}).Write(dir, "compile"); err != nil {
		t.Fatal(err)
	}
	// A file and a folder at one path cannot both be written.
	bad := Set{{Path: "a.yaml", Data: []byte("new")}, {Path: "a.yaml/b.yaml", Data: []byte("b")}}
	if err := bad.Write(dir, "compile"); err == nil {
		t.Fatal("writing a file under a file succeeded")
	}
	if got := read(t, filepath.Join(dir, "a.yaml")); got != "old" {
		t.Errorf("old output changed to %q", got)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestUnsafePathsAreRejected(t *testing.T) {
	for _, p := range []string{"", "/etc/passwd", "../x", "a/../../x", "a//b", Marker} {
		if err := (Set{{Path: p}}).Check(); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	if err := (Set{{Path: "a"}, {Path: "a"}}).Check(); err == nil {
		t.Error("two files at one path accepted")
	}
}

func TestDiffShowsChangedAddedAndRemovedFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := (Set{{Path: "a.yaml", Data: []byte("x: 1\n")}, {Path: "gone.yaml", Data: []byte("g\n")}}).Write(dir, "compile"); err != nil {
		t.Fatal(err)
	}
	same := Set{{Path: "a.yaml", Data: []byte("x: 1\n")}, {Path: "gone.yaml", Data: []byte("g\n")}}
	if d, err := same.Diff(dir, "compile"); err != nil || len(d) != 0 {
		t.Fatalf("diff of identical output = %q, %v", d, err)
	}
	d, err := Set{{Path: "a.yaml", Data: []byte("x: 2\n")}, {Path: "new.yaml", Data: []byte("n\n")}}.Diff(dir, "compile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-x: 1", "+x: 2", "--- /dev/null", "+++ " + filepath.ToSlash(dir) + "/new.yaml", "+++ /dev/null"} {
		if !strings.Contains(string(d), want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if d, err := same.Diff(filepath.Join(dir, "missing"), "compile"); err != nil || len(d) == 0 {
		t.Errorf("a missing folder must differ: %q %v", d, err)
	}
}
