package autoscale

import (
	"fmt"
	"math"
	"path"
	"slices"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/keda"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/spec"
)

// fleetSpec autoscales two models on vLLM, each on its own Deployment, on
// a grouped TTFT SLO: 99.5% under 250ms.
const fleetSpec = `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fleet}
spec:
  engine: vllm
  groupBy: [model_name]
  window: 28d
  objectives:
    - {sli: ttft, threshold: 250ms, target: 99.5%}
  autoscaling:
    target: {name: "vllm-{{model_name}}"}
    minReplicas: 2
    maxReplicas: 8
    prometheus: http://prometheus-operated.monitoring:9090
    queuePerReplica: "4"
    groups: [{model_name: llama}, {model_name: qwen}]
`

// fleetSetup compiles fleetSpec: its TTFT SLO, rules and one Autoscaler
// per model.
func fleetSetup(t *testing.T) (model.SLO, FleetOptions, map[string]Autoscaler) {
	t.Helper()
	res, err := spec.Parse(spec.Source{Name: "fleet.yaml", Data: []byte(fleetSpec)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	files, err := irules.Build(res.Set, nil)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := keda.Build(res.Set)
	if err != nil {
		t.Fatal(err)
	}
	scalers := map[string]Autoscaler{}
	for _, f := range objects {
		a, err := ParseScaledObject(f.Data)
		if err != nil {
			t.Fatal(err)
		}
		scalers[path.Base(f.Path)] = a
	}
	slo := res.Set.SLOs[0]
	return slo, FleetOptions{SLO: slo, Rules: files, Warmup: time.Hour}, scalers
}

// vllmReplicas is a vLLM replica: 32 requests at once for 4s each, so 8 requests
// a second at full use. 60% of prompts prefill in 50ms, 39.7% in 100ms and
// 0.3% take 400ms whatever the load: the SLO holds at 99.7% when nothing
// queues, and no replica count moves those 0.3%.
func vllmReplicas(model string, a Autoscaler, replicas int, load func(time.Duration) float64) Fleet {
	return Fleet{
		Labels: map[string]string{"model_name": model}, Autoscaler: a,
		Slots: 32, ServiceTime: 4 * time.Second, Startup: time.Minute, Replicas: replicas,
		Prefill: capacity.PrefillMix(0.25, 0.01),
		Load:    load,
	}
}

func steady(rps float64) func(time.Duration) float64 {
	return func(time.Duration) float64 { return rps }
}

// ramp is rps from..to over [start, start+length], flat either side.
func ramp(from, to float64, start, length time.Duration) func(time.Duration) float64 {
	return func(t time.Duration) float64 {
		switch {
		case t <= start:
			return from
		case t >= start+length:
			return to
		}
		return from + (to-from)*float64(t-start)/float64(length)
	}
}

// loadRamp is 6 requests/s, ramped to 90 (past the 64 that 8 replicas
// serve) from 70m to 90m, held to 100m, back to 6 by 115m.
func loadRamp(t time.Duration) float64 {
	if t < 100*time.Minute {
		return ramp(6, 90, 70*time.Minute, 20*time.Minute)(t)
	}
	return ramp(90, 6, 100*time.Minute, 15*time.Minute)(t)
}

func TestAutoscalerHoldsStillWhileTheSLOIsMet(t *testing.T) {
	slo, opts, scalers := fleetSetup(t)
	a := scalers["vllm-llama.yaml"]
	// 4 replicas serve 10 requests/s at 31% use: the SLO holds with room,
	// so the fleet may shrink but must never grow.
	opts.Fleets = []Fleet{vllmReplicas("llama", a, 4, steady(10))}
	opts.End = 2 * time.Hour
	steps, err := runFleet(opts)
	if err != nil {
		t.Fatal(err)
	}
	allowed := slo.ErrorBudget().Float()
	for _, s := range steps {
		if s.Share[0] > allowed {
			t.Fatalf("%s: the SLO is not met (%.4f slow), the scenario is wrong", s.T, s.Share[0])
		}
		if s.Replicas[0] > 4 {
			t.Errorf("%s: %d replicas, up from 4 while %.4f of requests are slow against %.4f allowed (triggers %v)", s.T, s.Replicas[0], s.Share[0], allowed, s.Values[0])
		}
		for j, tr := range a.Triggers {
			if v := s.Values[0][j]; s.T >= opts.Warmup && !tr.Average && v > tr.Target*(1+hpaTolerance) {
				t.Errorf("%s: trigger %s reads %v over its target %v while the SLO holds", s.T, tr.Name, v, tr.Target)
			}
		}
	}
	last := steps[len(steps)-1]
	t.Logf("replicas 4 -> %d at 10 requests/s, %.4f slow", last.Replicas[0], last.Share[0])
}

func TestAutoscalerScalesOutBeforeThePageAndInAfterALoadRamp(t *testing.T) {
	_, opts, scalers := fleetSetup(t)
	opts.Fleets = []Fleet{vllmReplicas("llama", scalers["vllm-llama.yaml"], 2, loadRamp)}
	opts.End = 150 * time.Minute
	steps, err := runFleet(opts)
	if err != nil {
		t.Fatal(err)
	}
	r := rampFigures(steps, 0, 2)
	t.Logf("%s", r)
	switch {
	case r.rise < 0:
		t.Fatal("replicas never rose under the ramp")
	case r.page < 0:
		t.Fatal("the page never fired: the ramp does not outrun the fleet, so it proves nothing")
	case r.rise >= r.page:
		t.Errorf("replicas rose at %s, not before the page at %s", r.rise, r.page)
	case r.peak <= 2:
		t.Errorf("peak replicas %d", r.peak)
	case r.fall < 0:
		t.Errorf("replicas never fell after the page: %s", r)
	case r.final >= r.peak:
		t.Errorf("replicas end at %d, the peak %d", r.final, r.peak)
	}
}

// figures are the landmarks of a load-ramp run.
type figures struct {
	rise, page, resolved, peakAt, fall time.Duration
	peak, final                        int
	loadAtRise, loadAtPage, loadAtFall float64
}

func (f figures) String() string {
	return fmt.Sprintf("replicas rise at %s (%.0f requests/s), the page fires at %s (%.0f requests/s) and resolves at %s, peak %d replicas at %s, falling from %s (%.0f requests/s) to %d",
		f.rise, f.loadAtRise, f.page, f.loadAtPage, f.resolved, f.peak, f.peakAt, f.fall, f.loadAtFall, f.final)
}

func rampFigures(steps []FleetStep, i, start int) figures {
	f := figures{rise: -1, page: -1, resolved: -1, fall: -1}
	prev := start
	for _, s := range steps {
		if f.rise < 0 && s.Replicas[i] > start {
			f.rise, f.loadAtRise = s.T, s.Load[i]
		}
		if f.page < 0 && s.Paging[i] {
			f.page, f.loadAtPage = s.T, s.Load[i]
		}
		if f.page >= 0 && f.resolved < 0 && !s.Paging[i] {
			f.resolved = s.T
		}
		if s.Replicas[i] > f.peak {
			f.peak, f.peakAt = s.Replicas[i], s.T
		}
		if f.page >= 0 && f.fall < 0 && s.Replicas[i] < prev {
			f.fall, f.loadAtFall = s.T, s.Load[i]
		}
		prev = s.Replicas[i]
	}
	f.final = steps[len(steps)-1].Replicas[i]
	return f
}

func TestAVanishedSeriesNeverScalesIn(t *testing.T) {
	_, opts, scalers := fleetSetup(t)
	// The ramp's peak scales the fleet out; at 95m, under full load, an
	// upgrade renames the metrics, and then the load drops away.
	f := vllmReplicas("llama", scalers["vllm-llama.yaml"], 2, loadRamp)
	f.VanishAt = 95 * time.Minute
	opts.Fleets = []Fleet{f}
	opts.End = 130 * time.Minute
	steps, err := runFleet(opts)
	if err != nil {
		t.Fatal(err)
	}
	atVanish := -1
	for _, s := range steps {
		if s.T == f.VanishAt {
			atVanish = s.Replicas[0]
		}
		if atVanish > 0 && s.Replicas[0] < atVanish {
			t.Fatalf("%s: %d replicas, down from %d when the series vanished (triggers %v)", s.T, s.Replicas[0], atVanish, s.Values[0])
		}
	}
	last := steps[len(steps)-1]
	for j, v := range last.Values[0] {
		if !math.IsNaN(v) {
			t.Errorf("trigger %d reads %v after the series vanished, want nothing", j, v)
		}
	}
	if atVanish <= 2 {
		t.Errorf("the fleet had %d replicas when the series vanished; the scenario needs a scaled-out fleet", atVanish)
	}
	t.Logf("%d replicas when the series vanished, %d at the end", atVanish, last.Replicas[0])
}

func TestAnotherModelBurningChangesNothingForThisModelsAutoscaler(t *testing.T) {
	_, opts, scalers := fleetSetup(t)
	opts.End = 110 * time.Minute
	run := func(qwenLoad func(time.Duration) float64) []FleetStep {
		o := opts
		o.Fleets = []Fleet{
			vllmReplicas("llama", scalers["vllm-llama.yaml"], 2, steady(6)),
			vllmReplicas("qwen", scalers["vllm-qwen.yaml"], 2, qwenLoad),
		}
		steps, err := runFleet(o)
		if err != nil {
			t.Fatal(err)
		}
		return steps
	}
	calm, burning := run(steady(6)), run(loadRamp)
	if f := rampFigures(burning, 1, 2); f.page < 0 || f.peak <= 2 {
		t.Fatalf("qwen neither paged nor scaled (%s): the scenario proves nothing", f)
	}
	for i := range calm {
		a, b := calm[i], burning[i]
		if a.Replicas[0] != b.Replicas[0] || a.Paging[0] != b.Paging[0] || fmt.Sprint(a.Values[0]) != fmt.Sprint(b.Values[0]) {
			t.Fatalf("%s: llama's autoscaler differs while qwen burns: replicas %d vs %d, triggers %v vs %v, paging %t vs %t",
				a.T, a.Replicas[0], b.Replicas[0], a.Values[0], b.Values[0], a.Paging[0], b.Paging[0])
		}
	}
}

// When every trigger's series vanish, a fallback that holds keeps the
// fleet where it is; currentReplicasIfHigher takes it to the fallback's
// replicas, as KEDA 2.18+ does for every trigger.
func TestAVanishedSeriesHoldsTheFleetUnderTheHoldingFallback(t *testing.T) {
	tests := []struct {
		name string
		hold bool
		want int
	}{
		{"behavior currentReplicas holds 2 replicas", true, 2},
		{"behavior currentReplicasIfHigher scales 2 to the fallback's 8", false, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Autoscaler{MinReplicas: 2, MaxReplicas: 16, FallbackReplicas: 8, FailureThreshold: 3, HoldOnFallback: tt.hold,
				Triggers: []Trigger{{Name: "queue", Average: true, Target: 2}}}
			s := &fleetSim{f: Fleet{Autoscaler: a}, replicas: 2, failures: make([]int, 1)}
			for i := range 6 {
				s.sync(time.Duration(i)*15*time.Second, []float64{math.NaN()})
			}
			if got := s.replicas + len(s.pending); got != tt.want {
				t.Errorf("%d replicas after the series vanished, want %d", got, tt.want)
			}
		})
	}
}

// Two replicas offered 20 requests/s for the 16 they serve build a backlog;
// a third replica starts. Pooled, it takes from the fleet's one backlog at
// once; routed at random, the backlog stays with the two that hold it and
// the new replica's queue starts empty.
func TestAReplicaThatStartsTakesTheBacklogOnlyWhenTheQueueIsPooled(t *testing.T) {
	slo, _, scalers := fleetSetup(t)
	for _, tt := range []struct {
		name    string
		routing Routing
		queues  int
	}{{"pooled, the third replica drains the fleet's backlog", Pooled, 1}, {"routed at random, the backlog stays where it queued", Random, 3}} {
		t.Run(tt.name, func(t *testing.T) {
			f := vllmReplicas("llama", scalers["vllm-llama.yaml"], 2, steady(20))
			f.Routing = tt.routing
			s := newFleetSim(f, slo)
			for at := time.Duration(0); at < 2*time.Minute; at += HPASync {
				s.advance(at)
			}
			held := slices.Clone(s.backlogs)
			if len(held) == 0 || held[0] <= 0 {
				t.Fatalf("backlogs %v after two minutes at 20 requests/s for 16: want some", held)
			}
			s.scaleTo(2*time.Minute, 3)
			at := 2*time.Minute + f.Startup
			s.advance(at)
			if len(s.backlogs) != tt.queues {
				t.Fatalf("%d queues with 3 replicas serving, want %d", len(s.backlogs), tt.queues)
			}
			// 3 replicas serve 24 requests/s: each queue drains.
			if tt.routing == Random && (s.backlogs[2] != 0 || s.backlogs[0] <= 0) {
				t.Errorf("backlogs %v: the replica that started holds none, the others theirs", s.backlogs)
			}
			if tt.routing == Pooled && s.backlogs[0] >= held[0] {
				t.Errorf("the pool's backlog %v did not fall from %v with a third replica serving", s.backlogs[0], held[0])
			}
		})
	}
}

// runFleet simulates opts as the command does: the SLO checked, the rules
// indexed.
func runFleet(opts FleetOptions) ([]FleetStep, error) {
	if err := Ready(opts.SLO); err != nil {
		return nil, err
	}
	x, err := prom.IndexRules(opts.Rules)
	if err != nil {
		return nil, err
	}
	return RunIndexed(x, opts)
}
