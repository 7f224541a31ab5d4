package lint

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// Each archive of testdata/refused holds a rule file promtool check rules
// refuses (one class of rulefmt error each) and the same file made valid.
func TestEveryRuleFilePromtoolRefusesIsALocatedError(t *testing.T) {
	archives, err := filepath.Glob("testdata/refused/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(archives) < 30 {
		t.Fatalf("%d refused rule files; the corpus holds one per rulefmt error class", len(archives))
	}
	promtool := os.Getenv("INFERSLO_PROMTOOL")
	for _, path := range archives {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			a, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`(?m)^want: (\d+)$`).FindSubmatch(a.Comment)
			if m == nil || len(a.Files) != 2 {
				t.Fatal("archive needs a want: line and bad.yaml, good.yaml")
			}
			want, _ := strconv.Atoi(string(m[1]))
			dir := t.TempDir()
			for _, f := range a.Files {
				if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			bad, good := filepath.Join(dir, "bad.yaml"), filepath.Join(dir, "good.yaml")
			res := lintFiles(t, Options{}, bad)
			located := false
			for _, fd := range res.Findings {
				located = located || fd.Severity == Error && fd.Line == want
			}
			if !located {
				t.Errorf("no error at line %d of bad.yaml; findings %+v", want, res.Findings)
			}
			if res := lintFiles(t, Options{}, good); res.Count(Error) > 0 {
				t.Errorf("good.yaml has errors: %+v", res.Findings)
			}
			if promtool == "" {
				return
			}
			if out, err := exec.Command(promtool, "check", "rules", bad).CombinedOutput(); err == nil {
				t.Errorf("promtool accepts bad.yaml: %s", out)
			}
			if out, err := exec.Command(promtool, "check", "rules", good).CombinedOutput(); err != nil {
				t.Errorf("promtool refuses good.yaml: %v: %s", err, out)
			}
		})
	}
}
