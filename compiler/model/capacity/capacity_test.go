package capacity

import (
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

func TestCeilingReproducesTheIssueReferencePoints(t *testing.T) {
	tests := []struct {
		name   string
		target float64
		about  float64 // the documented rounded figure
		exact  string  // what the formula gives, rounded down to a thousandth
	}{
		{"a 300ms target allows about 63% utilisation", 0.3, 0.63, "0.617"},
		{"a 400ms target allows about 70% utilisation", 0.4, 0.70, "0.7"},
		{"a 500ms target allows about 75% utilisation", 0.5, 0.75, "0.754"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Ceiling(tt.target, 0.04, 1)
			if got.String() != tt.exact {
				t.Errorf("Ceiling(%vs, 40ms, 1 slot) = %s, want %s", tt.target, got, tt.exact)
			}
			if d := got.Float() - tt.about; d < -0.015 || d > 0.015 {
				t.Errorf("Ceiling(%vs) = %s is not within 1.5 points of the documented %v", tt.target, got, tt.about)
			}
		})
	}
}

func TestCeilingIsTheLargestUtilisationWithinTheTail(t *testing.T) {
	tests := []struct {
		name            string
		target, service float64
		slots           int
	}{
		{"one slot at 400ms over 40ms", 0.4, 0.04, 1},
		{"one slot at a tight 100ms over 40ms", 0.1, 0.04, 1},
		{"eight slots at 250ms over 2s", 0.25, 2, 8},
		{"four slots at 2s over 500ms", 2, 0.5, 4},
		{"32 slots at 100ms over 1s", 0.1, 1, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rho := Ceiling(tt.target, tt.service, tt.slots).Float()
			c := float64(tt.slots)
			if tail := waitTailByPoisson(tt.slots, rho*c, tt.target/tt.service); tail > TailProbability {
				t.Errorf("at the ceiling %v the wait tail is %v, above %v", rho, tail, TailProbability)
			}
			next := rho + 0.001
			if tail := waitTailByPoisson(tt.slots, next*c, tt.target/tt.service); next < 1 && tail <= TailProbability {
				t.Errorf("the ceiling %v is not the largest: %v still has tail %v", rho, next, tail)
			}
		})
	}
}

func TestCeilingTightensAsTheTargetShrinks(t *testing.T) {
	prev := model.NewDecimal(1, 1)
	for _, target := range []float64{2, 1, 0.5, 0.4, 0.3, 0.2, 0.1} {
		got := Ceiling(target, 0.04, 1)
		if got.Cmp(prev) > 0 {
			t.Errorf("ceiling at %vs is %s, above the %s of a looser target", target, got, prev)
		}
		prev = got
	}
}

func TestPlanOfTheIssueExampleIs58Replicas(t *testing.T) {
	// 1,000 requests/s at 40ms mean service time: L = 40 in service. With
	// one slot per replica Erlang C is the M/M/1 tail ρ · exp(−(1 − ρ)T/S):
	// 58 replicas run at ρ = 0.69 with a tail of 0.031, 57 at ρ = 0.70 leave
	// 0.0356, over the 0.035 allowed.
	r, err := Plan(ttftSLO(model.NewDecimal(4, 10), model.NewDecimal(1000, 1), 40*time.Millisecond, model.Decimal{}))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ what, got, want string }{
		{"concurrency", r.Concurrency.String(), "40"},
		{"ceiling", r.Ceiling.String(), "0.7"},
		{"slots", r.Slots.String(), "1"},
		{"queue per replica", r.QueuePerReplica.String(), "1.63"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
	if r.Replicas != 58 {
		t.Errorf("replicas = %d, want 58", r.Replicas)
	}
	if r.SlotsMeasured {
		t.Error("slots reported as measured although the spec gave none")
	}
	assertExplains(t, r,
		"L = λ × S = 1000 × 0.04 = 40",
		"N = 58, the fewest that meet it",
		"N = 58: a = 0.6897, ρ = 68.97%, C(1, 0.6897) = 0.6897, P(wait > T) = 0.6897 · exp(−3.103) = 0.03096 ≤ 0.035",
		"N = 57: a = 0.7018, ρ = 70.18%, C(1, 0.7018) = 0.7018, P(wait > T) = 0.7018 · exp(−2.982) = 0.03556 > 0.035",
		"= 0.7 (70%)",
		"Lq = C(c, c·ρ) · ρ / (1 − ρ) = 1.633333333333 → 1.63",
	)
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

func TestPlanUsesMeasuredReplicaConcurrency(t *testing.T) {
	tests := []struct {
		name     string
		slots    model.Decimal
		servers  int
		replicas int
	}{
		{"one measured slot matches the default", model.NewDecimal(1, 1), 1, 58},
		{"eight slots need far fewer replicas", model.NewDecimal(8, 1), 8, 6},
		{"a fractional measurement is rounded down to whole slots", model.NewDecimal(25, 10), 2, 24},
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
			assertFewestMeetingTheTail(t, r)
			if !r.SlotsMeasured {
				t.Error("measured slots not reported as measured")
			}
		})
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
	if len(plans) != 1 || plans[0].Service != "chat" || plans[0].SLO != "chat-ttft" || plans[0].Replicas != 58 {
		t.Fatalf("Plans() = %+v, want only chat's 58-replica plan from chat-ttft", plans)
	}

	onlyErrors := model.Set{SLOs: []model.SLO{errorsSLO}}
	if _, err := Plans(onlyErrors); err == nil || !strings.Contains(err.Error(), "no ttft SLO") {
		t.Errorf("Plans() of a service whose facts sit on an errors SLO: error = %v", err)
	}
}

func TestQueueTargetStaysPositive(t *testing.T) {
	tests := []struct {
		name    string
		ceiling model.Decimal
		servers int
		want    string
	}{
		{"70% of one slot leaves 1.63 waiting", model.NewDecimal(7, 10), 1, "1.63"},
		{"a tiny ceiling still yields a usable target", model.NewDecimal(35, 1000), 1, "0.01"},
		{"90% of one slot leaves 8.1 waiting", model.NewDecimal(9, 10), 1, "8.1"},
		{"90% of 32 slots queues half as much as one slot", model.NewDecimal(9, 10), 32, "4.12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := queueAtCeiling(tt.ceiling, tt.servers).String(); got != tt.want {
				t.Errorf("queueAtCeiling(%s, %d) = %s, want %s", tt.ceiling, tt.servers, got, tt.want)
			}
		})
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
