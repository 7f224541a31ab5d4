//go:build unix

package spec_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferslo/inferslo/spec"
)

const chatSpec = `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  window: 28d
  objectives: [{sli: errors, target: 99%}]
`

// secret stands for a credential a spec folder might link to.
const secret = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu"

// TestLoadRefusesWhatIsNotASpecFile covers the inputs a spec folder from
// many authors may hold: each must fail with an error naming the file,
// without the file's content and without hanging.
func TestLoadRefusesWhatIsNotASpecFile(t *testing.T) {
	tests := []struct {
		name string
		// setup builds the inputs in dir and returns the path to load.
		setup func(t *testing.T, dir string) string
		want  string
	}{
		{"a link out of the spec folder is refused", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "token"), secret)
			writeFile(t, filepath.Join(dir, "specs", "chat.yaml"), chatSpec)
			symlink(t, filepath.Join(dir, "token"), filepath.Join(dir, "specs", "token.yaml"))
			return filepath.Join(dir, "specs")
		}, "symbolic link out of folder"},
		{"a link to a folder outside is not followed", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "outside", "token.yaml"), secret)
			writeFile(t, filepath.Join(dir, "specs", "chat.yaml"), "kind: [")
			symlink(t, filepath.Join(dir, "outside"), filepath.Join(dir, "specs", "more"))
			return filepath.Join(dir, "specs")
		}, "invalid YAML"},
		{"a broken link is refused", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "specs", "chat.yaml"), chatSpec)
			symlink(t, filepath.Join(dir, "nowhere"), filepath.Join(dir, "specs", "gone.yaml"))
			return filepath.Join(dir, "specs")
		}, "broken symbolic link"},
		{"a device is refused", func(t *testing.T, dir string) string {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			return "/dev/zero"
		}, "not a regular file (a device)"},
		{"a named pipe is refused without waiting for a writer", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "specs", "chat.yaml"), chatSpec)
			if err := syscall.Mkfifo(filepath.Join(dir, "specs", "pipe.yaml"), 0o600); err != nil {
				t.Skip(err)
			}
			return filepath.Join(dir, "specs")
		}, "not a regular file (a named pipe)"},
		{"a file over the size cap is refused", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "big.yaml")
			writeFile(t, p, "")
			if err := os.Truncate(p, spec.MaxFileSize+1); err != nil {
				t.Fatal(err)
			}
			return p
		}, "larger than 10 MB"},
		{"a link to a folder named like a spec is refused", func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "specs", "sub", "chat.yaml"), chatSpec)
			symlink(t, "sub", filepath.Join(dir, "specs", "folder.yaml"))
			return filepath.Join(dir, "specs")
		}, "not a regular file (a folder)"},
		{"a path with a newline is refused", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "a\n---\nkind: ConfigMap.yaml")
			writeFile(t, p, chatSpec)
			return p
		}, "holds a control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			done := make(chan struct{})
			var res spec.Result
			var err error
			go func() {
				defer close(done)
				res, err = spec.Load(path)
			}()
			// A hang guard, not a speed target: a loaded machine may take
			// seconds, a read blocked on a pipe takes forever.
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("load hung")
			}
			if err == nil {
				err = res.Err()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			for _, p := range res.Problems {
				if strings.Contains(p.String()+p.Snippet(), secret) {
					t.Fatalf("problem shows the file's content: %s", p)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error shows the file's content: %v", err)
			}
		})
	}
}

func TestLoadReadsALinkInsideTheSpecFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "specs", "shared", "chat.yml"), chatSpec)
	symlink(t, filepath.Join("shared", "chat.yml"), filepath.Join(dir, "specs", "chat.yaml"))
	res, err := spec.Load(filepath.Join(dir, "specs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 {
		t.Fatalf("files = %v, want the link and its target", res.Files)
	}
}

// A file that is not YAML may be a secret under a spec's name: its text must
// not be shown, though its problem is located.
func TestInvalidYAMLIsReportedWithoutItsText(t *testing.T) {
	res, err := spec.Parse(spec.Source{Name: "token.yaml", Data: []byte("key: " + secret + "\n\t: &a *b '" + secret + "'\n")})
	if err != nil {
		t.Fatal(err)
	}
	errs := res.Problems.Errors()
	if len(errs) != 1 || errs[0].Line == 0 {
		t.Fatalf("problems = %v, want one located problem", errs)
	}
	if out := errs[0].String() + errs[0].Snippet(); strings.Contains(out, secret) || strings.Contains(out, "key:") {
		t.Fatalf("problem shows the file's content: %s", out)
	}
}

func TestAbsoluteAndRelativeSpecPathsNameFilesAlike(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "specs", "chat.yaml"), chatSpec)
	t.Chdir(dir)
	rel, err := spec.Discover("specs")
	if err != nil {
		t.Fatal(err)
	}
	abs, err := spec.Discover(filepath.Join(dir, "specs"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rel, ",") != "specs/chat.yaml" || strings.Join(abs, ",") != "specs/chat.yaml" {
		t.Fatalf("relative = %v, absolute = %v; want both specs/chat.yaml", rel, abs)
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
}

// compile sp -o sp/out puts inferslo's output below the specs: a later run
// reads the specs, not the artifacts, and the output named itself is read.
func TestAnOutputFolderBelowTheSpecsIsNotReadAsSpecs(t *testing.T) {
	dir := t.TempDir()
	doc := "apiVersion: inferslo/v1alpha1\nkind: InferenceSLO\nmetadata: {name: chat}\nspec: {engine: vllm, window: 28d, objectives: [{sli: errors, target: 99.9%}]}\n"
	if err := os.WriteFile(filepath.Join(dir, "chat.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(out, "prometheus"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{".inferslo": "compile\n", "prometheus/chat.rules.yaml": "groups: []\n"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := spec.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || !strings.HasSuffix(files[0], "chat.yaml") {
		t.Fatalf("found %v, want the spec alone", files)
	}
	if files, err := spec.Discover(out); err != nil || len(files) != 1 {
		t.Fatalf("the output folder given by name: %v, %v", files, err)
	}
}
