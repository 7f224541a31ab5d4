package simulate

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
)

var allExamples = flag.Bool("all-examples", false, "simulate every example SLO, not one of each kind (CI proves them all with `inferslo test examples`)")

func TestEveryExampleSLOPassesEveryScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates days of traffic")
	}
	if os.Getenv("INFERSLO_LONG") == "" {
		t.Skip("replays example SLOs of each kind through every scenario (about 45 CPU-s); INFERSLO_LONG=1 runs it (CI's long simulate step, beside `inferslo test --strict examples`, which replays every example SLO)")
	}
	set := slotest.Examples(t).Set
	if !*allExamples {
		set.SLOs = oneOfEachKind(set.SLOs)
	}
	var names []string
	for _, s := range set.SLOs {
		names = append(names, s.Name)
	}
	t.Logf("simulating %d SLOs: %s", len(set.SLOs), strings.Join(names, ", "))
	r, err := Run(set, Options{})
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

// oneOfEachKind picks few SLOs that together cover every alert tier
// layout, budgeting, traffic gate and no-data alert of the set, native
// histograms, goodput's bounds and a plain OpenSLO ratio (greedily, the
// SLO adding the most uncovered traits first): SLOs alike in all of these
// share their rules' shape and differ in the SLI's queries, whose series
// are checked to drive the SLI exactly without a replay (synth.New), and
// replaying each costs seconds of CPU. CI's `inferslo test --strict
// examples` replays every engine and role.
func oneOfEachKind(slos []model.SLO) []model.SLO {
	traits := func(s model.SLO) []string {
		out := []string{"source=openslo"}
		if s.Inference != nil {
			out = []string{fmt.Sprintf("native=%t", s.Inference.Native), fmt.Sprintf("goodput=%t", s.Inference.Role == model.SLIGoodput)}
		}
		layout := "tiers="
		for _, t := range s.Alerting.Tiers {
			layout += fmt.Sprintf("%s:%d,", t.Severity, len(t.Windows))
		}
		return append(out, layout, "budgeting="+s.Budgeting, fmt.Sprintf("gate=%t", !s.Alerting.MinEventsPerSecond.IsZero()),
			fmt.Sprintf("nodata=%t", s.Alerting.NoData))
	}
	covered := map[string]bool{}
	var out []model.SLO
	for {
		best, gain := -1, 0
		for i, s := range slos {
			n := 0
			for _, tr := range traits(s) {
				if !covered[tr] {
					n++
				}
			}
			if n > gain {
				best, gain = i, n
			}
		}
		if best < 0 {
			return out
		}
		for _, tr := range traits(slos[best]) {
			covered[tr] = true
		}
		out = append(out, slos[best])
	}
}
