package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreCommitHooks runs the real pre-commit against a fixture repository:
// the lint hook refuses a broken rule and passes a clean one, and the check
// hook refuses stale compiled output. pre-commit builds inferslo with `go
// install` from this repository, so the test needs pre-commit on PATH and
// the Go module proxy; it runs when INFERSLO_PRECOMMIT=1.
func TestPreCommitHooks(t *testing.T) {
	if os.Getenv("INFERSLO_PRECOMMIT") != "1" {
		t.Skip("set INFERSLO_PRECOMMIT=1 to run pre-commit itself")
	}
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Fatal("INFERSLO_PRECOMMIT=1 but pre-commit is not on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	// pre-commit gives the hook its own GOPATH; keep the module cache the
	// machine already has.
	env := append(os.Environ(), "PRE_COMMIT_HOME="+filepath.Join(t.TempDir(), "cache"),
		"GOMODCACHE="+strings.TrimSpace(string(modcache)), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	sh := func(want bool, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if (err == nil) != want {
			t.Fatalf("%s %s: err %v, want success %v; output:\n%s", name, strings.Join(args, " "), err, want, out.String())
		}
		return out.String()
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh(true, "git", "init", "-q")
	rule := func(le string) string {
		return "groups:\n  - name: vllm\n    rules:\n      - alert: VLLMSlowTimeToFirstToken\n        expr: |\n" +
			"          sum(rate(vllm:time_to_first_token_seconds_bucket{le=\"" + le + "\"}[5m]))\n" +
			"            / sum(rate(vllm:time_to_first_token_seconds_count[5m])) < 0.95\n        for: 10m\n        labels: {severity: page}\n"
	}

	// A commit adding a broken rule is refused: the hook runs on the staged files.
	write("rules/vllm.yaml", rule("0.3"))
	sh(true, "git", "add", "rules/vllm.yaml")
	out := sh(false, "pre-commit", "try-repo", root, "inferslo-lint")
	if !strings.Contains(out, `the neighbours are le="0.25" and le="0.5"`) || !strings.Contains(out, "engine/le-not-a-bucket") {
		t.Fatalf("the refusal does not name the bucket problem:\n%s", out)
	}

	// The fixed rule passes and commits.
	write("rules/vllm.yaml", rule("0.25"))
	sh(true, "git", "add", "rules/vllm.yaml")
	sh(true, "pre-commit", "try-repo", root, "inferslo-lint")
	sh(true, "git", "commit", "-q", "-m", "rules")

	// The check hook passes on fresh output and refuses a stale one.
	spec, err := os.ReadFile(filepath.Join(root, "examples", "chat.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write("slos/chat.yaml", string(spec))
	t.Chdir(dir)
	if code := run([]string{"compile", "slos", "-o", "generated"}, &bytes.Buffer{}, &bytes.Buffer{}); code != exitOK {
		t.Fatalf("compile exit %d", code)
	}
	sh(true, "git", "add", "-A")
	sh(true, "pre-commit", "try-repo", root, "inferslo-check", "--all-files")
	write("slos/chat.yaml", strings.Replace(string(spec), "target: 99.9%", "target: 99.5%", 1))
	sh(true, "git", "add", "-A")
	out = sh(false, "pre-commit", "try-repo", root, "inferslo-check", "--all-files")
	if !strings.Contains(out, "generated is stale") {
		t.Fatalf("the check hook did not report stale output:\n%s", out)
	}
}
