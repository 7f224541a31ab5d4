package compiler

import (
	"os/exec"
	"strings"
	"testing"
)

// Compile writes text: a first `go run ./cmd/inferslo compile` must not
// build Prometheus' storage engine or rules manager, which only the
// simulation (test, render, backtest) runs. The PromQL parser and engine
// types the backends validate with stay; they name only the sample
// encodings (tsdb/chunkenc, tsdb/chunks), not the head, WAL or index.
func TestCompileLinksNoTSDBOrRulesManager(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps printed %d packages; is it listing this package?", len(deps))
	}
	forbidden := []string{
		"github.com/prometheus/prometheus/tsdb",
		"github.com/prometheus/prometheus/tsdb/wlog",
		"github.com/prometheus/prometheus/tsdb/index",
		"github.com/prometheus/prometheus/rules",
		"github.com/inferslo/inferslo/compiler/simulate/prom",
		"github.com/inferslo/inferslo/compiler/simulate/workload",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f {
				t.Errorf("./compiler links %s", d)
			}
		}
	}
	t.Logf("./compiler links %d packages", len(deps))
}
