package capacity

import (
	"math"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// erlangCByPoisson computes C(c, a) of an M/M/c queue from the textbook
// Erlang C formula, independently of ErlangB's recursion:
//
//	C(c, a) = (a^c/c! · c/(c−a)) / (Σ_{k<c} a^k/k! + a^c/c! · c/(c−a))
//
// with every term taken in logs (Lgamma for k!) and summed by log-sum-exp, so
// that large c neither overflows nor underflows.
func erlangCByPoisson(c int, a float64) float64 {
	if a >= float64(c) {
		return 1
	}
	logTerm := func(k int) float64 {
		lg, _ := math.Lgamma(float64(k) + 1)
		return float64(k)*math.Log(a) - lg
	}
	logs := make([]float64, 0, c+1)
	for k := range c {
		logs = append(logs, logTerm(k))
	}
	waiting := logTerm(c) + math.Log(float64(c)/(float64(c)-a))
	logs = append(logs, waiting)
	top := math.Inf(-1)
	for _, l := range logs {
		top = math.Max(top, l)
	}
	var sum float64
	for _, l := range logs {
		sum += math.Exp(l - top)
	}
	return math.Exp(waiting - top - math.Log(sum))
}

// missByPoisson is the share of TTFTs over the target with k pooled slots
// offered a erlangs, from the textbook Erlang C: a request of prefill p
// misses when it waits longer than T − p.
func missByPoisson(m Model, k int, a float64) float64 {
	if a >= float64(k) {
		return 1
	}
	miss := 0.0
	for _, c := range m.Prefill {
		x := m.Target - c.Seconds
		if x <= 0 {
			miss += c.Share
			continue
		}
		miss += c.Share * erlangCByPoisson(k, a) * math.Exp(-(float64(k)-a)*x/m.ServiceTime)
	}
	return miss
}

// assertFewestHoldingTheObjective checks by the independent formula that
// the plan's replicas hold the objective at peak and one fewer would not.
func assertFewestHoldingTheObjective(t *testing.T, r Result) {
	t.Helper()
	load := r.Concurrency.Float()
	if miss := missByPoisson(r.Model, r.Replicas*r.Servers, load); miss > r.Model.Budget {
		t.Errorf("%d replicas leave %v of TTFTs over the target, above the budget %v", r.Replicas, miss, r.Model.Budget)
	}
	if r.Replicas > 1 {
		if miss := missByPoisson(r.Model, (r.Replicas-1)*r.Servers, load); miss <= r.Model.Budget {
			t.Errorf("%d replicas would already hold the objective (%v over the target)", r.Replicas-1, miss)
		}
	}
}

func TestPlanAgreesWithAnIndependentErlangC(t *testing.T) {
	tests := []struct {
		name     string
		peak     model.Decimal
		service  time.Duration
		target   model.Decimal
		slots    model.Decimal
		replicas int
	}{
		{"SGLang with 32 slots at 120 requests/s, 1s per request and a 100ms target needs 5 replicas",
			model.NewDecimal(120, 1), time.Second, model.NewDecimal(1, 10), model.NewDecimal(32, 1), 5},
		{"one slot at 1,000 requests/s, 40ms per request and a 400ms target is rag-chat's 41",
			model.NewDecimal(1000, 1), 40 * time.Millisecond, model.NewDecimal(4, 10), model.NewDecimal(1, 1), 41},
		{"64 slots at 200 requests/s, 2s per request and a 250ms target need 7 replicas",
			model.NewDecimal(200, 1), 2 * time.Second, model.NewDecimal(25, 100), model.NewDecimal(64, 1), 7},
		{"4,096 slots at 100,000 requests/s and 1s per request stay finite",
			model.NewDecimal(100000, 1), time.Second, model.NewDecimal(5, 10), model.NewDecimal(4096, 1), 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Plan(ttftSLO(tt.target, tt.peak, tt.service, tt.slots))
			if err != nil {
				t.Fatal(err)
			}
			if r.Replicas != tt.replicas {
				t.Errorf("replicas = %d, want %d\n%s", r.Replicas, tt.replicas, r.Explain())
			}
			assertFewestHoldingTheObjective(t, r)
			want := missByPoisson(r.Model, r.AtPeak.Servers, r.AtPeak.Load)
			if got := r.Model.Miss(r.AtPeak.Servers, r.AtPeak.Load); math.IsNaN(got) || math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Errorf("the miss at %d replicas = %v, the textbook formula gives %v", r.Replicas, got, want)
			}
		})
	}
}

func TestErlangCMatchesTheTextbookFormula(t *testing.T) {
	for _, c := range []int{1, 2, 8, 32, 256, 4096} {
		for _, rho := range []float64{0.05, 0.5, 0.9, 0.999} {
			q := Queue{Servers: c, Load: rho * float64(c)}
			got, want := q.ErlangC(), erlangCByPoisson(c, q.Load)
			if math.IsNaN(got) || math.Abs(got-want) > 1e-9 {
				t.Errorf("C(%d, %v) = %v, the textbook formula gives %v", c, q.Load, got, want)
			}
		}
	}
	if got := (Queue{Servers: 1, Load: 0.7}).ErlangC(); math.Abs(got-0.7) > 1e-12 {
		t.Errorf("C(1, 0.7) = %v, want ρ = 0.7 (M/M/1)", got)
	}
	if got := (Queue{Servers: 4, Load: 4}).ErlangC(); got != 1 {
		t.Errorf("C(4, 4) = %v, want 1: a saturated fleet makes every request wait", got)
	}
}

func TestPlanShowsTheErlangArithmetic(t *testing.T) {
	r, err := Plan(ttftSLO(model.NewDecimal(1, 10), model.NewDecimal(120, 1), time.Second, model.NewDecimal(32, 1)))
	if err != nil {
		t.Fatal(err)
	}
	assertExplains(t, r,
		"c = 32 (measured)",
		"L = λ × S = 120 × 1 = 120 requests in service",
		"prefill (assumed)  60% in 0.02s, 39.7% in 0.04s, 0.3% in 0.16s (past T whatever the load)",
		"miss = Σ share · C(k, L) · exp(−(k − L) · (T − prefill) / S) ≤ 0.01, the error budget",
		"N = 5, the fewest that meet it",
		"N = 5: k = 160, ρ = 75%, C(160, 120) = 0.0003036, miss = 0.003018 ≤ 0.01",
		"N = 4: k = 128, ρ = 93.75%, C(128, 120) = 0.365, miss = 0.2081 > 0.01",
	)
}
