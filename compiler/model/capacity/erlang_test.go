package capacity

import (
	"math"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// waitTailByPoisson computes P(wait > T) of an M/M/c queue from the textbook
// Erlang C formula, independently of ErlangB's recursion:
//
//	C(c, a) = (a^c/c! · c/(c−a)) / (Σ_{k<c} a^k/k! + a^c/c! · c/(c−a))
//
// with every term taken in logs (Lgamma for k!) and summed by log-sum-exp, so
// that large c neither overflows nor underflows.
func waitTailByPoisson(c int, a, targetOverService float64) float64 {
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
	erlangC := math.Exp(waiting - top - math.Log(sum))
	return erlangC * math.Exp(-(float64(c)-a)*targetOverService)
}

// assertFewestMeetingTheTail checks by the independent formula that the plan's
// replicas meet the tail and one fewer would not.
func assertFewestMeetingTheTail(t *testing.T, r Result) {
	t.Helper()
	load := r.Concurrency.Float()
	ratio := r.Target.Float() / r.ServiceTime.Float()
	if tail := waitTailByPoisson(r.Servers, load/float64(r.Replicas), ratio); tail > TailProbability {
		t.Errorf("%d replicas leave P(wait > T) = %v, above %v", r.Replicas, tail, TailProbability)
	}
	if r.Replicas > 1 {
		if tail := waitTailByPoisson(r.Servers, load/float64(r.Replicas-1), ratio); tail <= TailProbability {
			t.Errorf("%d replicas would already meet the tail (%v)", r.Replicas-1, tail)
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
		// The M/M/1 bound with c in the exponent asked for 12 here.
		{"SGLang with 32 slots at 120 requests/s, 1s per request and a 100ms target needs 6 replicas",
			model.NewDecimal(120, 1), time.Second, model.NewDecimal(1, 10), model.NewDecimal(32, 1), 6},
		{"one slot at 1,000 requests/s, 40ms per request and a 400ms target is the seed's 58",
			model.NewDecimal(1000, 1), 40 * time.Millisecond, model.NewDecimal(4, 10), model.NewDecimal(1, 1), 58},
		{"64 slots at 200 requests/s, 2s per request and a 250ms target need 8 replicas",
			model.NewDecimal(200, 1), 2 * time.Second, model.NewDecimal(25, 100), model.NewDecimal(64, 1), 8},
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
			assertFewestMeetingTheTail(t, r)
			want := waitTailByPoisson(r.Servers, r.AtPeak.Load, r.AtPeak.TargetOverService)
			if got := r.AtPeak.WaitTail(); math.IsNaN(got) || math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Errorf("P(wait > T) at %d replicas = %v, the textbook formula gives %v", r.Replicas, got, want)
			}
		})
	}
}

func TestErlangCMatchesTheTextbookFormula(t *testing.T) {
	for _, c := range []int{1, 2, 8, 32, 256, 4096} {
		for _, rho := range []float64{0.05, 0.5, 0.9, 0.999} {
			q := Queue{Servers: c, Load: rho * float64(c), TargetOverService: 0}
			got, want := q.ErlangC(), waitTailByPoisson(c, q.Load, 0)
			if math.IsNaN(got) || math.Abs(got-want) > 1e-9 {
				t.Errorf("C(%d, %v) = %v, the textbook formula gives %v", c, q.Load, got, want)
			}
		}
	}
	if got := (Queue{Servers: 1, Load: 0.7}).ErlangC(); math.Abs(got-0.7) > 1e-12 {
		t.Errorf("C(1, 0.7) = %v, want ρ = 0.7 (M/M/1)", got)
	}
	if got := (Queue{Servers: 4, Load: 4}).ErlangC(); got != 1 {
		t.Errorf("C(4, 4) = %v, want 1: a saturated replica makes every request wait", got)
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
		"P(wait > T) = C(c, a) · exp(−(c − a) · T / S) ≤ 0.035, T / S = 0.1",
		"N = 6, the fewest that meet it",
		"N = 6: a = 20, ρ = 62.5%, C(32, 20) = ",
		"N = 5: a = 24, ρ = 75%, C(32, 24) = ",
	)
}
