package realcode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// inferslo runs the CLI and returns its output, failing the test when it
// fails.
func inferslo(t *testing.T, args ...string) []byte {
	t.Helper()
	out, stderr, err := run(t, args...)
	if err != nil {
		t.Fatalf("inferslo %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return []byte(out)
}

// run runs the CLI: $INFERSLO_BIN when set (CI builds it once), else `go
// run` from the repository root. It returns the output, the error output
// and the exit error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if bin := os.Getenv("INFERSLO_BIN"); bin != "" {
		cmd = exec.Command(bin, args...)
	} else {
		cmd = exec.Command("go", append([]string{"run", "./cmd/inferslo"}, args...)...)
	}
	cmd.Dir = root
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

// compiled compiles the bundled examples with extra flags into a fresh
// folder and returns it.
func compiled(t *testing.T, flags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	inferslo(t, append([]string{"compile", "--tests", "examples", "-o", out}, flags...)...)
	return out
}

// files returns the files matching a glob below dir, failing when none do.
func files(t *testing.T, dir, glob string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, glob))
	if err != nil || len(m) == 0 {
		t.Fatalf("no %s in %s: %v", glob, dir, err)
	}
	return m
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mutate returns data with old replaced once by new, failing when old is
// not there (a mutation that does not apply proves nothing).
func mutate(t *testing.T, data []byte, old, new string) []byte {
	t.Helper()
	if !strings.Contains(string(data), old) {
		t.Fatalf("mutation: %q not found", old)
	}
	return []byte(strings.Replace(string(data), old, new, 1))
}
