package autoscale

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/spec"
)

// replayable are the autoscaled SLOs of the examples and testdata whose
// capacity facts give the replay a peak.
func replayable(t *testing.T) []Replayer {
	t.Helper()
	set := slotest.Examples(t).Set
	for _, name := range []string{"warning-queue-floor.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "bad", name))
		if err != nil {
			t.Fatal(err)
		}
		res, err := spec.Parse(spec.Source{Name: name, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		set.SLOs = append(set.SLOs, res.Set.SLOs...)
	}
	var out []Replayer
	for _, slo := range set.SLOs {
		if slo.Autoscaling == nil || slo.Inference == nil || slo.Inference.Role != "ttft" {
			continue
		}
		files, err := irules.Build(model.Set{SLOs: []model.SLO{slo}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		x, err := prom.IndexRules(files)
		if err != nil {
			t.Fatal(err)
		}
		r, why, err := NewReplayer(slo, x, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if why != "" {
			t.Logf("%s: not replayed: %s", slo.Name, why)
			continue
		}
		out = append(out, r)
	}
	return out
}

func TestReplayExplore(t *testing.T) {
	for _, r := range replayable(t) {
		for _, tr := range Traces() {
			o, err := r.Replay(r.Fleet.Autoscaler, tr)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: attainment %.5f, %.1f replica-hours, peak %d, needed %d, %d overshoots %v, flaps %d", r.SLO.Name, tr.Name, o.Attainment, o.ReplicaHours, o.Peak, r.Needed(), len(o.Overshoots), o.Overshoots[:min(3, len(o.Overshoots))], o.Flaps)
			if q, ok, _ := r.QueueOnly(); ok {
				o, err := r.Replay(q, tr)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("  queue only: attainment %.5f, %.1f replica-hours, peak %d", o.Attainment, o.ReplicaHours, o.Peak)
			}
			s := r.Static(r.Needed(), tr)
			t.Logf("  static %d: attainment %.5f, %.1f replica-hours; smallest static %d", r.Needed(), s.Attainment, s.ReplicaHours, r.SmallestStatic(tr))
		}
	}
}
