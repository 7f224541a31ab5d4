package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateAndCompileAgreeOnEveryBadInput runs both commands over every
// case of testdata/bad: same exit code, same problems reported, and a
// compile that fails writes nothing.
func TestValidateAndCompileAgreeOnEveryBadInput(t *testing.T) {
	t.Parallel()
	cases, err := filepath.Glob("../../testdata/bad/*.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no bad-input cases: %v", err)
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c), ".yaml"), func(t *testing.T) {
			var vOut, vErr, cOut, cErr bytes.Buffer
			vCode := run([]string{"validate", c}, &vOut, &vErr)
			out := filepath.Join(t.TempDir(), "out")
			cCode := run([]string{"compile", c, "-o", out}, &cOut, &cErr)
			if vCode != cCode {
				t.Fatalf("validate exits %d, compile %d\nvalidate:\n%s\ncompile:\n%s", vCode, cCode, vErr.String(), cErr.String())
			}
			// compile adds only its summary line after the problems
			cProblems := strings.TrimSuffix(cErr.String(), lastLine(cErr.String()))
			if cCode == exitOK {
				if vErr.String() != cProblems {
					t.Errorf("problems differ\nvalidate:\n%s\ncompile:\n%s", vErr.String(), cProblems)
				}
				return
			}
			if vErr.String() != cErr.String() {
				t.Errorf("problems differ\nvalidate:\n%s\ncompile:\n%s", vErr.String(), cErr.String())
			}
			if vErr.Len() == 0 {
				t.Error("a failing case reported nothing")
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a failing compile left %s behind (stat: %v)", out, err)
			}
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:] + "\n"
}
