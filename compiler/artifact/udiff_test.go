package artifact

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// changed counts the - and + lines of a unified diff, headers aside.
func changed(diff []byte) int {
	n := 0
	for _, line := range strings.Split(string(diff), "\n") {
		if strings.HasPrefix(line, "---") || strings.HasPrefix(line, "+++") {
			continue
		}
		if strings.HasPrefix(line, "-") || strings.HasPrefix(line, "+") {
			n++
		}
	}
	return n
}

// TestCheckDiffIsAsShortAsDiffU compares the diff --check prints with
// `diff -u --minimal` on rule-file-like texts full of repeated lines (where
// a diff anchored on unique lines reports far more), edited in scattered
// places: both change exactly as many lines, and the diff applies.
func TestCheckDiffIsAsShortAsDiffU(t *testing.T) {
	bin, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("no diff(1) to compare with")
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	words := []string{"  - record: inferslo:sli_error:ratio", "    labels:", "      window: 5m", "      window: 1h", "    expr: |-", "      sum(rate(x[5m]))", ""}
	for round := range 5 {
		t.Run(fmt.Sprintf("text %d", round), func(t *testing.T) {
			var old []string
			for range 300 {
				old = append(old, words[rnd.IntN(len(words))])
			}
			edited := append([]string(nil), old...)
			for range 12 {
				i := rnd.IntN(len(edited))
				switch rnd.IntN(3) {
				case 0:
					edited[i] = fmt.Sprintf("      window: %dm", rnd.IntN(100))
				case 1:
					edited = append(edited[:i], edited[i+1:]...)
				default:
					edited = append(edited[:i], append([]string{"    for: 2m"}, edited[i:]...)...)
				}
			}
			have := []byte(strings.Join(old, "\n") + "\n")
			want := []byte(strings.Join(edited, "\n") + "\n")
			got, err := unified("out/a.yaml", have, "out/a.yaml", want)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if err := os.WriteFile(a, have, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(b, want, 0o644); err != nil {
				t.Fatal(err)
			}
			ref, _ := exec.Command(bin, "-u", "--minimal", a, b).Output()
			if g, w := changed(got), changed(ref); g != w || w == 0 {
				t.Errorf("the check diff changes %d lines, diff -u --minimal %d:\n%s", g, w, got)
			}
			if patch, err := exec.LookPath("patch"); err == nil {
				cmd := exec.Command(patch, "-s", a)
				cmd.Stdin = bytes.NewReader(got)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("patch: %v\n%s", err, out)
				}
				if patched, _ := os.ReadFile(a); !bytes.Equal(patched, want) {
					t.Error("the diff applied with patch(1) does not give the new text")
				}
			}
		})
	}
}
