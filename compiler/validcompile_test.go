package compiler_test

import (
	"path/filepath"
	"testing"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/spec"
)

// Every problem a backend could meet is a located spec problem: a spec
// set that validates (warnings allowed) compiles, with the promtool tests
// too. A check moved from the spec into a backend fails here, unlocated.
func TestEverySpecThatValidatesCompiles(t *testing.T) {
	t.Chdir("..")
	sets := []string{"examples", "testdata/calendar", "testdata/timeslices", "testdata/fleet", "testdata/engines"}
	bad, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets = append(sets, bad...)
	compiled := 0
	for _, path := range sets {
		res, err := spec.Load(path)
		if err != nil || res.Err() != nil {
			continue // refused with located problems: testdata/bad's own test
		}
		if _, err := compiler.Compile(res.Set, compiler.Options{Tests: true}); err != nil {
			t.Errorf("%s validates but does not compile: %v", path, err)
		}
		compiled++
	}
	if compiled < 10 {
		t.Fatalf("only %d spec sets validated; the test reads the examples, testdata and the warning cases of testdata/bad", compiled)
	}
}
