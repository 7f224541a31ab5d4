package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdRace is the script command `race ROUNDS OUT SPECS-A SPECS-B`: each round
// runs `inferslo compile SPECS-A -o OUT` and `inferslo compile SPECS-B -o OUT`
// at once. Every run must either succeed or fail saying why, and after each
// round OUT must be exactly the output of one of them as a lone run writes
// it, with nothing left beside it.
func cmdRace(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 || neg {
		ts.Fatalf("usage: race ROUNDS OUT SPECS-A SPECS-B")
	}
	rounds, err := strconv.Atoi(args[0])
	ts.Check(err)
	out, specs := ts.MkAbs(args[1]), []string{ts.MkAbs(args[2]), ts.MkAbs(args[3])}
	bin, err := exec.LookPath("inferslo")
	ts.Check(err)
	// What each run writes alone.
	want := make([]string, len(specs))
	for i, s := range specs {
		ref := filepath.Join(ts.MkAbs("race-ref"), strconv.Itoa(i))
		if code, stderr := runCompile(bin, s, ref); code != 0 {
			ts.Fatalf("compile %s alone: exit %d\n%s", s, code, stderr)
		}
		want[i] = tree(ts, ref)
	}
	parent := filepath.Dir(out)
	for round := range rounds {
		var wg sync.WaitGroup
		codes, stderrs := make([]int, len(specs)), make([]string, len(specs))
		for i, s := range specs {
			wg.Go(func() { codes[i], stderrs[i] = runCompile(bin, s, out) })
		}
		wg.Wait()
		for i := range specs {
			ok := codes[i] == 0 && strings.HasPrefix(stderrs[i], "wrote ")
			failed := codes[i] != 0 && strings.Contains(stderrs[i], "another inferslo run")
			if !ok && !failed {
				ts.Fatalf("round %d: run %d exited %d saying:\n%s", round, i, codes[i], stderrs[i])
			}
		}
		got := tree(ts, out)
		if got != want[0] && got != want[1] {
			ts.Fatalf("round %d: %s is neither run's whole output:\n%s", round, args[1], got)
		}
		if beside := siblings(ts, parent, filepath.Base(out)); beside != filepath.Base(out) {
			ts.Fatalf("round %d: named after %s: %s, want only the folder", round, args[1], beside)
		}
	}
	ts.Logf("%d rounds: every run succeeded or said why, and %s was always one run's whole output", rounds, args[1])
}

func runCompile(bin, specs, out string) (int, string) {
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "compile", specs, "-o", out)
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		return -1, err.Error()
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// tree lists every file below dir with its content, links as links.
func tree(ts *testscript.TestScript, dir string) string {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s %x\n", rel, d.Type(), sha256.Sum256(data))
		return nil
	})
	ts.Check(err)
	return b.String()
}

// siblings names what lies beside the output folder and is named after it.
func siblings(ts *testscript.TestScript, parent, name string) string {
	entries, err := os.ReadDir(parent)
	ts.Check(err)
	var names []string
	for _, e := range entries {
		if strings.Contains(e.Name(), name) {
			names = append(names, e.Name())
		}
	}
	return strings.Join(names, ",")
}

// cmdCrash is the script command `crash OUT SPECS`: it kills (SIGKILL)
// `inferslo compile SPECS -o OUT` as soon as its temporary folder appears,
// retrying while the run finishes first, and fails unless a kill landed
// mid-run and left that folder behind.
func cmdCrash(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: crash OUT SPECS")
	}
	out, specs := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	bin, err := exec.LookPath("inferslo")
	ts.Check(err)
	tmp := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	for range 20 {
		cmd := exec.Command(bin, "compile", specs, "-o", out)
		ts.Check(cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		for {
			select {
			case <-done:
			default:
				if m, _ := filepath.Glob(tmp); len(m) == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				ts.Check(cmd.Process.Kill())
				<-done
			}
			break
		}
		if !cmd.ProcessState.Success() {
			if m, _ := filepath.Glob(tmp); len(m) == 0 {
				ts.Fatalf("the killed run left no temporary folder")
			}
			return
		}
	}
	ts.Fatalf("every run finished before it could be killed")
}
