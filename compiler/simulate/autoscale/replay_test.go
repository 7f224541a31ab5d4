package autoscale

import (
	"math"
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

func TestTheTriggersBeforeTheReplayOvershotTheBurstAndTheGeneratedOnesDoNot(t *testing.T) {
	var chat Replayer
	for _, r := range replayable(t) {
		if r.SLO.Name == "chat-ttft" {
			chat = r
		}
	}
	if chat.SLO.Name == "" {
		t.Fatal("examples/chat.yaml's TTFT SLO is not replayable")
	}
	before, err := os.ReadFile(filepath.Join("testdata", "chat.before.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := ParseScaledObject(before)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		scaler    Autoscaler
		overshoot bool
	}{
		// A 5m TTFT window read against the ready replicas, the summed
		// queue over 1 per replica: 3 -> 7 -> 14 -> 16 as the burst
		// saturates 3 replicas, where the plan needs 6.
		{"the triggers before the replay existed", old, true},
		{"the generated triggers", chat.Fleet.Autoscaler, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := chat.Replay(tt.scaler, Burst())
			if err != nil {
				t.Fatal(err)
			}
			if got := len(o.Overshoots) > 0; got != tt.overshoot {
				t.Errorf("overshoots %v, want some: %t", o.Overshoots, tt.overshoot)
			}
			t.Logf("attainment %.5f, %.1f replica-hours, peak %d against %d needed, overshoots %v", o.Attainment, o.ReplicaHours, o.Peak, chat.Needed(), o.Overshoots)
		})
	}
}

func TestEveryReplayableSLOHoldsItsObjectiveOnBothTracesCheaperThanTheBaselines(t *testing.T) {
	for _, r := range replayable(t) {
		objective := r.SLO.Objective.Float()
		for _, tr := range Traces() {
			t.Run(r.SLO.Name+" on the "+tr.Name, func(t *testing.T) {
				o, err := r.Replay(r.Fleet.Autoscaler, tr)
				if err != nil {
					t.Fatal(err)
				}
				if o.Attainment < objective {
					t.Errorf("attainment %.5f under the objective %v", o.Attainment, objective)
				}
				if len(o.Overshoots) > 0 || o.Flaps > 0 {
					t.Errorf("%d flaps, overshoots %v", o.Flaps, o.Overshoots)
				}
				if limit := int(math.Ceil(MaxAskFactor * float64(r.Needed()))); o.Peak > limit {
					t.Errorf("peak %d replicas, over %d = 1.5 x the %d the plan needs at the peak", o.Peak, limit, r.Needed())
				}
				baselines := map[string]Outcome{"static peak sizing": r.Static(r.Needed(), tr)}
				if q, ok, err := r.QueueOnly(); err != nil {
					t.Fatal(err)
				} else if ok {
					if baselines["queue depth only"], err = r.Replay(q, tr); err != nil {
						t.Fatal(err)
					}
				}
				for name, b := range baselines {
					switch {
					case b.Attainment >= objective && o.ReplicaHours >= b.ReplicaHours:
						t.Errorf("%.1f replica-hours, no fewer than %s's %.1f holding the SLO too", o.ReplicaHours, name, b.ReplicaHours)
					case b.Attainment < objective && o.Attainment <= b.Attainment:
						t.Errorf("attainment %.5f, no more than %s's %.5f", o.Attainment, name, b.Attainment)
					}
					t.Logf("%s: attainment %.5f, %.1f replica-hours", name, b.Attainment, b.ReplicaHours)
				}
				t.Logf("attainment %.5f, %.1f replica-hours, peak %d, needed %d", o.Attainment, o.ReplicaHours, o.Peak, r.Needed())
			})
		}
	}
}

func TestThePlansReplicasAreWithinOneOfTheFewestStaticReplicasHoldingThePeak(t *testing.T) {
	for _, r := range replayable(t) {
		smallest := r.SmallestStatic(Burst())
		t.Logf("%s: plan %d, fewest static %d (%d slots per replica)", r.SLO.Name, r.Needed(), smallest, r.Plan.Servers)
		// A replica of one slot queues alone in the plan, while the fleet
		// pools every replica's slots behind one queue: the plan sizes
		// such fleets for the queueing of one replica, past what a pooled
		// fleet needs.
		if r.Plan.Servers == 1 {
			continue
		}
		if smallest == 0 || smallest < r.Needed()-1 || smallest > r.Needed()+1 {
			t.Errorf("%s: the plan's %d replicas, the fewest static replicas holding the SLO at the peak %d", r.SLO.Name, r.Needed(), smallest)
		}
	}
}
