package keda

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// inferslo runs the CLI: $INFERSLO_BIN when set (CI builds it once), else
// `go run` from the repository root.
func inferslo(t *testing.T, args ...string) []byte {
	t.Helper()
	root, err := filepath.Abs("../../..")
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
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("inferslo %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return out
}
