package autoscale

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/spec"
)

// autoscaledSLOs are the autoscaled TTFT SLOs of the examples, the engines'
// testdata and the warning cases of testdata/bad (the specs that validate).
func autoscaledSLOs(t *testing.T) []model.SLO {
	t.Helper()
	root := filepath.Join("..", "..", "..")
	paths := []string{filepath.Join(root, "examples"), filepath.Join(root, "testdata", "engines")}
	bad, err := filepath.Glob(filepath.Join(root, "testdata", "bad", "warning-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []model.SLO
	for _, path := range append(paths, bad...) {
		res, err := spec.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, slo := range res.Set.SLOs {
			if slo.Autoscaling != nil && slo.Inference != nil && slo.Inference.Role == "ttft" {
				out = append(out, slo)
			}
		}
	}
	return out
}

// replayable are the autoscaled SLOs whose capacity facts give the replay
// a peak.
func replayable(t *testing.T) []Replayer {
	t.Helper()
	var out []Replayer
	for _, slo := range autoscaledSLOs(t) {
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
			continue
		}
		out = append(out, r)
	}
	return out
}

// An autoscaled SLO without capacity facts says nothing of what a replica
// serves: no trace can be sized for it, and the replay says so rather than
// invent a throughput. Every other autoscaled SLO is replayed.
func TestEveryAutoscaledSLOIsReplayedOrSaysItGivesNoCapacityFacts(t *testing.T) {
	replayed := 0
	for _, slo := range autoscaledSLOs(t) {
		_, why, err := NewReplayer(slo, prom.RuleIndex{}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case why == "":
			replayed++
		case why != NoCapacityFacts || !slo.Autoscaling.Capacity.PeakRPS.IsZero():
			t.Errorf("%s is not replayed: %s", slo.Name, why)
		}
	}
	if replayed < 4 {
		t.Errorf("%d autoscaled SLOs replayed, want chat's, rag-chat's and testdata's summarise and agent", replayed)
	}
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

// Every replayable SLO on both traces: attainment at least the objective,
// replica-hours under each baseline that holds the SLO (else attainment
// above it), the peak at most 1.5 times the plan's replicas at the trace's
// peak, no scale-up past 1.5 times the plan's at the load, no flap. An SLO
// whose maxReplicas is under the plan (validate warns of it) cannot hold
// the peak: its replay shows the warning true instead.
func TestEveryReplayableSLOHoldsItsObjectiveOnBothTracesCheaperThanTheBaselines(t *testing.T) {
	for _, r := range replayable(t) {
		objective := r.SLO.Objective.Float()
		capped := r.Fleet.Autoscaler.MaxReplicas < r.Plan.Replicas
		for _, tr := range Traces() {
			t.Run(r.SLO.Name+" on the "+tr.Name, func(t *testing.T) {
				o, err := r.Replay(r.Fleet.Autoscaler, tr)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("attainment %.5f, %.1f replica-hours, peak %d, needed %d", o.Attainment, o.ReplicaHours, o.Peak, r.Needed())
				if capped {
					if o.PeakAttainment >= objective {
						t.Errorf("maxReplicas %d is under the plan's %d, yet the fleet attains %.5f at the peak", r.Fleet.Autoscaler.MaxReplicas, r.Plan.Replicas, o.PeakAttainment)
					}
					return
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
			})
		}
	}
}

// The capacity plan sizes the fleet with the replay's own model (pooled
// Erlang C, the assumed prompt mix, the SLO's error budget), so its N is
// the fewest static replicas that hold the objective through the burst's
// peak, within one (the replay scores the whole peak, the plan its load).
func TestThePlansReplicasAreWithinOneOfTheFewestStaticReplicasHoldingThePeak(t *testing.T) {
	for _, r := range replayable(t) {
		smallest := r.SmallestStatic(Burst())
		t.Logf("%s: plan %d, fewest static %d (%d slots per replica)", r.SLO.Name, r.Needed(), smallest, r.Plan.Servers)
		if smallest == 0 {
			t.Errorf("%s: no static size up to twice the plan's %d holds the SLO at the peak", r.SLO.Name, r.Needed())
			continue
		}
		if smallest < r.Needed()-1 || smallest > r.Needed()+1 {
			t.Errorf("%s: the plan's %d replicas, the fewest static replicas holding the SLO at the peak %d", r.SLO.Name, r.Needed(), smallest)
		}
	}
}

// randomSized is the fewest replicas that hold the objective at the peak
// when each replica queues its share alone (routed at random): the plan's
// model with a queue per replica instead of one for the fleet.
func randomSized(r Replayer) int {
	p := r.Plan
	for n := 1; ; n++ {
		if p.Model.Miss(p.Servers, p.Concurrency.Float()/float64(n)) <= p.Model.Budget {
			return n
		}
	}
}

// The replay queues as the capacity plan does (Erlang C, the same prompt
// mix): pooled, its fewest static replicas holding the peak are the plan's
// N; routed at random (a Kubernetes Service: a queue per replica) they are
// the plan's model with a queue per replica, and more than the plan for
// every SLO. The plan assumes a load-aware gateway, and says so.
func TestTheReplaysFewestStaticReplicasAreTheSLOsErlangCSizingForItsRouting(t *testing.T) {
	for _, r := range replayable(t) {
		fewest := map[Routing]int{}
		for _, routing := range []Routing{Pooled, Random} {
			rr := r
			rr.Fleet.Routing = routing
			fewest[routing] = rr.SmallestStatic(Burst())
		}
		t.Logf("%s: plan %d, fewest static pooled %d, routed at random %d", r.SLO.Name, r.Needed(), fewest[Pooled], fewest[Random])
		if fewest[Pooled] != r.Plan.Replicas {
			t.Errorf("%s pooled: the replay's fewest static replicas %d, the plan's %d", r.SLO.Name, fewest[Pooled], r.Plan.Replicas)
		}
		if want := randomSized(r); fewest[Random] != want || want <= r.Plan.Replicas {
			t.Errorf("%s routed at random: the replay's fewest static replicas %d, the model's with a queue per replica %d, the plan's %d", r.SLO.Name, fewest[Random], want, r.Plan.Replicas)
		}
	}
}
