package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"inferslo": main,
	})
}

// TestScripts runs the end-to-end scripts in testdata/script, one per
// behaviour a user relies on. $EXAMPLES is the bundled examples folder,
// $SCRAPES the engines' /metrics scrapes written for tests. The condition
// [long] holds with INFERSLO_LONG set: a script whose replays the library's
// tests already prove skips without it, and CI's long cmd/inferslo step
// runs it.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	scrapes, err := filepath.Abs("../../testdata/scrapes")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("EXAMPLES", examples)
			e.Setenv("SCRAPES", scrapes)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "long" {
				return os.Getenv("INFERSLO_LONG") != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"race":  cmdRace,
			"crash": cmdCrash,
			// empty DIR: the folder holds nothing.
			"empty": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: empty DIR")
				}
				entries, err := os.ReadDir(ts.MkAbs(args[0]))
				ts.Check(err)
				if (len(entries) == 0) == neg {
					names := make([]string, len(entries))
					for i, e := range entries {
						names[i] = e.Name()
					}
					ts.Fatalf("%s holds %d entries %q", args[0], len(entries), names)
				}
			},
			// await GLOB...: wait for a path to match one of the patterns,
			// as a background command creates it. How long that takes
			// depends on the machine's load, so the wait has no bound of
			// its own: a command that never creates it fails by the test
			// binary's timeout.
			"await": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) == 0 || neg {
					ts.Fatalf("usage: await GLOB...")
				}
				for ; ; time.Sleep(50 * time.Millisecond) {
					for _, g := range args {
						if m, _ := filepath.Glob(ts.MkAbs(g)); len(m) > 0 {
							return
						}
					}
				}
			},
		},
	})
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"an unknown flag is a usage error", []string{"compile", "--bogus"}, exitUsage},
		{"an unknown command is a usage error", []string{"frobnicate"}, exitUsage},
		{"help is not an error", []string{"--help"}, exitOK},
		{"inferslo alone is a usage error", nil, exitUsage},
		{"--version is not an error", []string{"--version"}, exitOK},
		{"a missing spec is a problem", []string{"validate", "does-not-exist.yaml"}, exitProblems},
		{"the examples validate", []string{"validate", "../../examples"}, exitOK},
		{"an unknown lint format is a usage error", []string{"lint", "--format", "xml", "../../examples"}, exitUsage},
		{"lint findings are problems", []string{"lint", "../../compiler/lint/testdata/bad"}, exitProblems},
		{"clean files lint clean", []string{"lint", "../../compiler/lint/testdata/clean"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if got := run(tt.args, &out, &errOut); got != tt.want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", got, tt.want, errOut.String())
			}
		})
	}
}

// A spec name with a newline could start a YAML document of its own in a
// generated header: it is refused before anything is written.
func TestASpecPathWithANewlineWritesNothing(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "chat\n---\nkind: ConfigMap\n#.yaml")
	spec, err := os.ReadFile("../../examples/chat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, spec, 0o644); err != nil {
		t.Skip("file names with newlines unsupported:", err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if got := run([]string{"compile", dir, "-o", out}, &stdout, &stderr); got != exitProblems {
		t.Fatalf("exit %d, want %d; stderr:\n%s", got, exitProblems, stderr.String())
	}
	if !strings.Contains(stderr.String(), "control character") || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("stderr = %q, want one line refusing the name", stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("output written: %v", err)
	}
}

// TestBacktestTakesATimeBackFromNowAsTheNextArgument runs backtest with
// --from -30d, the help's own form: the value reaches the command (which
// then fails to reach Prometheus), never the parser as a short flag.
func TestBacktestTakesATimeBackFromNowAsTheNextArgument(t *testing.T) {
	for _, args := range [][]string{
		{"--from", "-30d"},
		{"--from=-30d"},
		{"--from", "-30d", "--to", "-1d"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"backtest", "../../testdata/calendar", "--prometheus", "http://127.0.0.1:1"}, args...), &stdout, &stderr)
			if code == exitOK || strings.Contains(stderr.String(), "short flag") || !strings.Contains(stderr.String(), "127.0.0.1:1") {
				t.Errorf("exit %d:\n%s", code, stderr.String())
			}
		})
	}
	if got := strings.Join(timeValues([]string{"backtest", "--from", "-30d", "--", "--to", "-1d"}), " "); got != "backtest --from=-30d -- --to -1d" {
		t.Errorf("timeValues: %s", got)
	}
}
