package simulate

import (
	"reflect"
	"slices"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
)

// Every scenario evaluates the rules span by span where it can (one range
// query per recording rule and span); its checks must be those of the
// rules manager's evaluation of every rule at every step.
func TestSpansCheckWhatEveryStepChecks(t *testing.T) {
	set := slotest.Examples(t).Set
	for _, name := range []string{"chat-errors", "chat-ttft-minutes"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			i := slices.IndexFunc(set.SLOs, func(s model.SLO) bool { return s.Name == name })
			if i < 0 {
				t.Fatalf("no example SLO %s", name)
			}
			slo := set.SLOs[i]
			var observed [][]Check
			for _, everyStep := range []bool{false, true} {
				s := simOf(t, slo, slo)
				s.everyStep = everyStep
				checks, err := s.all()
				if err != nil {
					t.Fatal(err)
				}
				if len(checks) == 0 {
					t.Fatalf("every step %v: no checks", everyStep)
				}
				observed = append(observed, checks)
			}
			if !reflect.DeepEqual(observed[0], observed[1]) {
				t.Errorf("span by span:\n%+v\nevery step:\n%+v", observed[0], observed[1])
			}
		})
	}
}
