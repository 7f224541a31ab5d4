package capacity

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// ttftSLO is a vLLM TTFT SLO with capacity facts, as the spec package would
// resolve it.
func ttftSLO(threshold model.Decimal, peak model.Decimal, service time.Duration, slots model.Decimal) model.SLO {
	return model.SLO{
		Name:      "chat-ttft",
		Service:   model.Service{Name: "chat"},
		Objective: model.NewDecimal(99, 100),
		Window:    28 * 24 * time.Hour,
		Inference: &model.Inference{
			Engine:    "vllm",
			Role:      "ttft",
			Threshold: threshold,
			Histogram: "vllm:time_to_first_token_seconds",
			Selector:  `model_name="llama-3-70b"`,
		},
		Autoscaling: &model.Autoscaling{
			TargetName:    "vllm-llama-3-70b",
			MinReplicas:   1,
			MaxReplicas:   80,
			ServerAddress: "http://prometheus.monitoring:9090",
			Capacity:      model.Capacity{PeakRPS: peak, MeanServiceTime: service, ReplicaConcurrency: slots},
		},
	}
}

// assertExplains checks that the plan's arithmetic shows every line part.
func assertExplains(t *testing.T, r Result, wants ...string) {
	t.Helper()
	explain := r.Explain()
	for _, want := range wants {
		if !strings.Contains(explain, want) {
			t.Errorf("Explain() lacks %q:\n%s", want, explain)
		}
	}
}

func TestPlanOfRagChatIs41Replicas(t *testing.T) {
	// 1,000 requests/s at 40ms mean service time: L = 40 in service. One
	// queue before 41 slots runs at 97.6% and leaves 0.4% of TTFTs over
	// 400ms (0.3% of them the prompts that prefill past it); 40 slots
	// cannot carry 40 erlangs.
	r, err := Plan(ttftSLO(model.NewDecimal(4, 10), model.NewDecimal(1000, 1), 40*time.Millisecond, model.Decimal{}))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ what, got, want string }{
		{"concurrency", r.Concurrency.String(), "40"},
		{"utilisation", r.Utilisation.String(), "0.975"},
		{"slots", r.Slots.String(), "1"},
		{"queue model", r.QueueModel.String(), "0.8"},
		{"queue per replica", r.QueuePerReplica.String(), "1"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
	if r.Replicas != 41 {
		t.Errorf("replicas = %d, want 41", r.Replicas)
	}
	if r.SlotsMeasured {
		t.Error("slots reported as measured although the spec gave none")
	}
	assertFewestHoldingTheObjective(t, r)
	assertExplains(t, r,
		"L = λ × S = 1000 × 0.04 = 40",
		"N = 41, the fewest that meet it",
		"N = 41: k = 41, ρ = 97.56%, C(41, 40) = 0.8229, miss = 0.003975 ≤ 0.01",
		"N = 40: k = 40, ρ = 100%, L ≥ k: the queue grows without bound",
		"C(k, L) · ρ / (1 − ρ) / N = 0.8028 → 0.8 waiting requests",
		"raised to 1",
	)
}

func TestPlanUsesMeasuredReplicaConcurrency(t *testing.T) {
	tests := []struct {
		name     string
		slots    model.Decimal
		servers  int
		replicas int
	}{
		{"one measured slot matches the default", model.NewDecimal(1, 1), 1, 41},
		{"eight slots need far fewer replicas", model.NewDecimal(8, 1), 8, 6},
		{"a fractional measurement is rounded down to whole slots", model.NewDecimal(25, 10), 2, 21},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Plan(ttftSLO(model.NewDecimal(4, 10), model.NewDecimal(1000, 1), 40*time.Millisecond, tt.slots))
			if err != nil {
				t.Fatal(err)
			}
			if r.Servers != tt.servers || r.Replicas != tt.replicas {
				t.Errorf("servers, replicas = %d, %d, want %d, %d\n%s", r.Servers, r.Replicas, tt.servers, tt.replicas, r.Explain())
			}
			assertFewestHoldingTheObjective(t, r)
			if !r.SlotsMeasured {
				t.Error("measured slots not reported as measured")
			}
		})
	}
}

// The miss falls as slots are added and rises with the load, which is
// what the bisection in Slots relies on; prompts that prefill past the
// target alone set its floor.
func TestTheMissFallsWithSlotsDownToThePromptsThatPrefillPastTheTarget(t *testing.T) {
	m := NewModel(0.04, 0.4, 0.01)
	prev := 1.0
	for k := 40; k <= 80; k++ {
		miss := m.Miss(k, 40)
		if miss > prev {
			t.Errorf("%d slots miss %v, more than %v with one fewer", k, miss, prev)
		}
		if miss < SlowPrefillShare*m.Budget {
			t.Errorf("%d slots miss %v, under the %v whose prefill passes the target", k, miss, SlowPrefillShare*m.Budget)
		}
		prev = miss
	}
	if m.Miss(50, 45) <= m.Miss(50, 40) {
		t.Error("more load on the same slots misses no more")
	}
}

func TestAPrefillMixThatSpendsTheBudgetHasNoPlan(t *testing.T) {
	m := NewModel(0.04, 0.4, 0.01)
	m.Prefill = []PrefillClass{{Share: 0.98, Seconds: 0.1}, {Share: 0.02, Seconds: 0.5}}
	if k, ok := m.Slots(40); ok {
		t.Errorf("Slots(40) = %d, want none: 2%% of prompts prefill past the target against a 1%% budget", k)
	}
	slo := ttftSLO(model.NewDecimal(4, 10), model.NewDecimal(1000, 1), 40*time.Millisecond, model.Decimal{})
	slo.Objective = model.NewDecimal(1, 1)
	if _, err := Plan(slo); err == nil || !strings.Contains(err.Error(), "objective") {
		t.Errorf("Plan() of a 100%% objective: error = %v, want one naming the objective", err)
	}
}

// The load trigger's square-root staffing asks for N replicas over the
// headroom at the plan's peak, and for a larger share more than the plan
// at a third of it: rag-chat's 41 replicas are 52 at the peak and 20,
// where the plan needs 14, at a third.
func TestTheReserveKeepsNOverTheHeadroomAtThePeakAndMoreAtLowLoad(t *testing.T) {
	r, err := Plan(ttftSLO(model.NewDecimal(4, 10), model.NewDecimal(1000, 1), 40*time.Millisecond, model.Decimal{}))
	if err != nil {
		t.Fatal(err)
	}
	beta := r.Reserve(0.8)
	staffed := func(rps float64) int {
		l := rps * r.ServiceTime.Float()
		return int(math.Ceil((l + beta*math.Sqrt(l)) / float64(r.Servers)))
	}
	for _, c := range []struct {
		rps           float64
		staffed, need int
	}{{1000, 52, 41}, {330, 20, 14}} {
		if got, need := staffed(c.rps), r.Need(c.rps); got != c.staffed || need != c.need {
			t.Errorf("at %v requests/s: staffed %d, plan %d; want %d and %d", c.rps, got, need, c.staffed, c.need)
		}
	}
	if got := float64(staffed(330)) / float64(r.Need(330)); got <= float64(staffed(1000))/float64(r.Need(1000)) {
		t.Errorf("the reserve at a third of the peak is %.2f times the plan, no more than at the peak", got)
	}
	if !math.IsNaN(r.Reserve(0)) {
		t.Error("a headroom of 0 has a reserve")
	}
}

func TestPlanRefusesMissingFacts(t *testing.T) {
	base := func() model.SLO {
		return ttftSLO(model.NewDecimal(4, 10), model.NewDecimal(1000, 1), 40*time.Millisecond, model.Decimal{})
	}
	tests := []struct {
		name  string
		edit  func(*model.SLO)
		wants string
	}{
		{"an SLO without autoscaling has no facts", func(s *model.SLO) { s.Autoscaling = nil }, "autoscaling section"},
		{"a missing peak rate is refused", func(s *model.SLO) { s.Autoscaling.Capacity.PeakRPS = model.Decimal{} }, "peakRPS"},
		{"a missing service time is refused", func(s *model.SLO) { s.Autoscaling.Capacity.MeanServiceTime = 0 }, "meanServiceTime"},
		{"a negative concurrency is refused", func(s *model.SLO) { s.Autoscaling.Capacity.ReplicaConcurrency = model.NewDecimal(-1, 1) }, "replicaConcurrency"},
		{"a concurrency under one slot is refused", func(s *model.SLO) { s.Autoscaling.Capacity.ReplicaConcurrency = model.NewDecimal(1, 2) }, "under one slot"},
		{"a concurrency beyond any engine is refused", func(s *model.SLO) { s.Autoscaling.Capacity.ReplicaConcurrency = model.NewDecimal(1e6, 1) }, "above 65536 slots"},
		{"an errors SLO has no TTFT target", func(s *model.SLO) { s.Inference.Role = "errors" }, "ttft SLO"},
		{"a plain OpenSLO ratio has no TTFT target", func(s *model.SLO) { s.Inference = nil }, "ttft SLO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slo := base()
			a := *slo.Autoscaling
			slo.Autoscaling = &a
			inf := *slo.Inference
			slo.Inference = &inf
			tt.edit(&slo)
			_, err := Plan(slo)
			if err == nil || !strings.Contains(err.Error(), tt.wants) {
				t.Errorf("Plan() error = %v, want one mentioning %q", err, tt.wants)
			}
		})
	}
}

func TestPlansCoverOnlyServicesWithFacts(t *testing.T) {
	chat := ttftSLO(model.NewDecimal(4, 10), model.NewDecimal(1000, 1), 40*time.Millisecond, model.Decimal{})
	errorsSLO := chat
	errorsSLO.Name = "chat-errors"
	errorsSLO.Inference = &model.Inference{Engine: "vllm", Role: "errors"}
	batch := ttftSLO(model.NewDecimal(1, 1), model.Decimal{}, 0, model.Decimal{})
	batch.Name, batch.Service.Name = "batch-ttft", "batch"
	set := model.Set{SLOs: []model.SLO{batch, errorsSLO, chat}}
	set.Sort()

	plans, err := Plans(set)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || plans[0].Service != "chat" || plans[0].SLO != "chat-ttft" || plans[0].Replicas != 41 {
		t.Fatalf("Plans() = %+v, want only chat's 41-replica plan from chat-ttft", plans)
	}

	onlyErrors := model.Set{SLOs: []model.SLO{errorsSLO}}
	if _, err := Plans(onlyErrors); err == nil || !strings.Contains(err.Error(), "no ttft SLO") {
		t.Errorf("Plans() of a service whose facts sit on an errors SLO: error = %v", err)
	}
}

func BenchmarkPlan(b *testing.B) {
	slo := ttftSLO(model.NewDecimal(4, 10), model.NewDecimal(1000, 1), 40*time.Millisecond, model.Decimal{})
	for b.Loop() {
		if _, err := Plan(slo); err != nil {
			b.Fatal(err)
		}
	}
}
