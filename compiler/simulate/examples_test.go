package simulate

import (
	"bytes"
	"testing"

	"github.com/inferslo/inferslo/spec"
)

// loadExamples resolves the repository's example specs.
func loadExamples(t testing.TB) spec.Result {
	t.Helper()
	res, err := spec.Load("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestEveryExampleSLOPassesEveryScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates days of traffic")
	}
	res := loadExamples(t)
	r, err := Run(res.Set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	if err := r.Error(); err != nil {
		t.Fatal(err)
	}
}
