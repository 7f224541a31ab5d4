package simulate

import (
	"slices"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
)

// The day/night scenario evaluates its rules span by span, or where they
// cannot span only where the SLO-window ratio read at the end depends on
// them; what it reads must be what evaluating every rule at every step
// records.
func TestTheDayNightScheduleRecordsWhatEveryStepWould(t *testing.T) {
	set := slotest.Examples(t).Set
	for _, name := range []string{"chat-errors", "chat-ttft-minutes"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			i := slices.IndexFunc(set.SLOs, func(s model.SLO) bool { return s.Name == name })
			if i < 0 {
				t.Fatalf("no example SLO %s", name)
			}
			slo := set.SLOs[i]
			var observed []string
			for _, everyStep := range []bool{false, true} {
				s := simOf(t, slo, slo)
				s.everyStep = everyStep
				checks, err := s.dayNight()
				if err != nil {
					t.Fatal(err)
				}
				if len(checks) != 1 || !checks[0].Pass {
					t.Fatalf("every step %v: checks %+v", everyStep, checks)
				}
				observed = append(observed, checks[0].Observed)
			}
			if observed[0] != observed[1] {
				t.Errorf("scheduled: %s; every step: %s", observed[0], observed[1])
			}
		})
	}
}
