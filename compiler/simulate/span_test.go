package simulate

import (
	"reflect"
	"slices"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
)

// The scenarios evaluate the rules span by span (one range query per
// recording rule and span), and the day/night scenario, where rules cannot
// span, only at the steps its final reading depends on; either must check
// what the rules manager's evaluation of every rule at every step checks.
func TestSpansAndTheScheduleCheckWhatEveryStepChecks(t *testing.T) {
	set := slotest.Examples(t).Set
	for _, name := range []string{"chat-errors", "chat-ttft-minutes"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			i := slices.IndexFunc(set.SLOs, func(s model.SLO) bool { return s.Name == name })
			if i < 0 {
				t.Fatalf("no example SLO %s", name)
			}
			checks := func(e evaluation, run func(*sloSim) ([]Check, error)) []Check {
				s := simOf(t, set.SLOs[i], set.SLOs[i])
				s.evaluation = e
				checks, err := run(s)
				if err != nil {
					t.Fatal(err)
				}
				return checks
			}
			want := checks(everyStep, (*sloSim).all)
			dayNight := slices.DeleteFunc(slices.Clone(want), func(c Check) bool { return c.Scenario != ScenarioDayNight })
			if len(dayNight) != 1 || !dayNight[0].Pass {
				t.Fatalf("every step: day/night checks %+v", dayNight)
			}
			if got := checks(spans, (*sloSim).all); !reflect.DeepEqual(got, want) {
				t.Errorf("span by span:\n%+v\nevery step:\n%+v", got, want)
			}
			if got := checks(scheduled, (*sloSim).dayNight); !reflect.DeepEqual(got, dayNight) {
				t.Errorf("day/night on its schedule:\n%+v\nevery step:\n%+v", got, dayNight)
			}
		})
	}
}
