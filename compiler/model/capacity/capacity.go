// Package capacity sizes an inference deployment for its peak load: how many
// replicas hold the TTFT SLO's objective, and the per-replica queue depth and
// load the KEDA triggers aim at. It is pure arithmetic on the model, and the
// model is the one the autoscaling replay (compiler/simulate/autoscale) runs:
//
//   - Routing is pooled: a load-aware gateway (llm-d's, an inference
//     extension's) sends each request to a free slot, so the fleet's N
//     replicas of c slots queue as one M/M/(N·c) queue (Erlang C). A
//     Kubernetes Service routing at random would queue each replica alone
//     and need more replicas than the plan.
//   - TTFT is a request's prefill, then its wait in the queue. No spec
//     gives the prefill's distribution, so the plan assumes a mix
//     (PrefillMix): most prompts prefill in a fifth or two fifths of the
//     threshold, and a share of the error budget's (SlowPrefillShare) in
//     1.6 thresholds whatever the load, which no replica count cures.
//   - The objective is the SLO's own: the share of TTFTs over the
//     threshold at most the error budget (1% for 99%).
package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// SlowPrefillShare is the share of the error budget the assumed prompt mix
// spends on prompts whose prefill alone passes the threshold.
const SlowPrefillShare = 0.3

// PrefillClass is a share of requests whose TTFT without queueing is
// Seconds (short prompts, long prompts): what more replicas cannot move.
type PrefillClass struct {
	Share, Seconds float64
}

// PrefillMix is the prompt mix the plan and the replay assume for a TTFT
// threshold (seconds) and error budget (a share): 60% prefill in a fifth of
// the threshold, the rest in two fifths but for SlowPrefillShare of the
// budget, which takes 1.6 thresholds.
func PrefillMix(threshold, budget float64) []PrefillClass {
	slow := SlowPrefillShare * budget
	return []PrefillClass{{Share: 0.6, Seconds: 0.2 * threshold}, {Share: 0.4 - slow, Seconds: 0.4 * threshold}, {Share: slow, Seconds: 1.6 * threshold}}
}

// Model is the TTFT model of a fleet: requests holding a slot for a mean
// ServiceTime, prefilling as Prefill says, queueing pooled before every slot.
type Model struct {
	// ServiceTime is S and Target T, in seconds.
	ServiceTime, Target float64
	// Budget is the share of TTFTs allowed over T.
	Budget  float64
	Prefill []PrefillClass
}

// NewModel is the model of a TTFT threshold and error budget at a mean
// service time (seconds), with the assumed prompt mix.
func NewModel(serviceTime, target, budget float64) Model {
	return Model{ServiceTime: serviceTime, Target: target, Budget: budget, Prefill: PrefillMix(target, budget)}
}

// Miss is the share of TTFTs over the target when k pooled slots are
// offered a erlangs: a request whose prefill p leaves x = T − p misses when
// it waits longer than x, P(wait > x) = C(k, a) · exp(−(k − a) · x / S)
// (with all k slots busy, slots free up at rate k/S while requests arrive
// at a/S, so a waiting request's wait is exponential with rate (k − a)/S);
// one whose prefill passes T misses whatever the wait. 1 when the queue
// does not drain.
func (m Model) Miss(k int, a float64) float64 {
	q := Queue{Servers: k, Load: a}
	if !q.Stable() {
		return 1
	}
	waits := q.ErlangC()
	miss := 0.0
	for _, c := range m.Prefill {
		if x := m.Target - c.Seconds; x <= 0 {
			miss += c.Share
		} else {
			miss += c.Share * waits * math.Exp(-(float64(k)-a)*x/m.ServiceTime)
		}
	}
	return miss
}

// floorMiss is the share of TTFTs over the target that no slot count
// removes: the prompts whose prefill alone passes it.
func (m Model) floorMiss() float64 {
	out := 0.0
	for _, c := range m.Prefill {
		if c.Seconds >= m.Target {
			out += c.Share
		}
	}
	return out
}

// Slots is the fewest pooled slots that carry a erlangs with the share of
// TTFTs over the target within the budget; false when even unbounded slots
// leave the prefill alone over the budget. The miss falls as slots are
// added, so the count is found by bisection.
func (m Model) Slots(a float64) (int, bool) {
	if m.floorMiss() >= m.Budget || m.ServiceTime <= 0 {
		return 0, false
	}
	if a <= 0 {
		return 0, true
	}
	meets := func(k int) bool { return m.Miss(k, a) <= m.Budget }
	lo := int(a) // lo slots cannot carry the load: a ≥ k
	hi := lo + 1
	for !meets(hi) {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if meets(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// Replicas is the fewest replicas of c slots that hold the objective at rps
// requests per second: the pooled slots rounded up to whole replicas.
func (m Model) Replicas(rps float64, c int) int {
	k, ok := m.Slots(rps * m.ServiceTime)
	if !ok || c < 1 {
		return 0
	}
	return (k + c - 1) / c
}

// MaxSlots bounds replicaConcurrency: the Erlang recursion costs one step per
// slot, and no serving engine batches more requests than this per replica.
const MaxSlots = 1 << 16

// Result is the capacity plan of one service at peak.
type Result struct {
	Service string
	SLO     string // the TTFT SLO whose threshold is the target
	// PeakRPS is λ, requests per second at peak.
	PeakRPS model.Decimal
	// ServiceTime is S, the mean time a request holds a slot, in seconds.
	ServiceTime model.Decimal
	// Target is T, the TTFT threshold in seconds.
	Target model.Decimal
	// Budget is the share of TTFTs the SLO allows over T.
	Budget model.Decimal
	// Slots is the concurrency the spec measured per replica; 1 when
	// unmeasured.
	Slots         model.Decimal
	SlotsMeasured bool
	// Servers is c, the whole slots of a replica the queueing model uses:
	// Slots rounded down, since a slot serves a whole request.
	Servers int
	// Concurrency is L = λ × S, requests in service at peak (Little's law).
	Concurrency model.Decimal
	// Model is the TTFT model the plan sizes with.
	Model Model
	// Replicas is N, the fewest replicas that hold the objective at peak.
	Replicas int
	// AtPeak is the fleet's pooled queue at peak with N replicas.
	AtPeak Queue
	// Utilisation is ρ = L / (N · c), rounded down to a thousandth.
	Utilisation model.Decimal
	// QueueModel is the mean number of waiting requests per replica at
	// peak, C(N·c, L) · ρ / (1 − ρ) / N, rounded down to hundredths.
	QueueModel model.Decimal
	// QueuePerReplica is the AverageValue target of the KEDA queue
	// trigger: QueueModel, and never below MinQueuePerReplica.
	QueuePerReplica model.Decimal
}

// Queue is an M/M/c queue: c slots, each serving a request in a mean time
// S, offered a = λ × S erlangs.
type Queue struct {
	Servers int
	Load    float64 // a, in erlangs
}

// Utilisation is ρ = a / c.
func (q Queue) Utilisation() float64 { return q.Load / float64(q.Servers) }

// Stable tells whether the queue drains: a < c.
func (q Queue) Stable() bool { return q.Load < float64(q.Servers) }

// ErlangC is the probability that a request waits at all, C(c, a); 1 when
// the queue is unstable.
func (q Queue) ErlangC() float64 {
	if !q.Stable() {
		return 1
	}
	b := ErlangB(q.Servers, q.Load)
	c := float64(q.Servers)
	return c * b / (c - q.Load*(1-b))
}

// MeanQueue is the mean number of waiting requests, C(c, a) · ρ / (1 − ρ).
func (q Queue) MeanQueue() float64 {
	if !q.Stable() {
		return math.Inf(1)
	}
	rho := q.Utilisation()
	return q.ErlangC() * rho / (1 - rho)
}

// ErlangB is the blocking probability of c servers offered a erlangs, by the
// recursion B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)): every term stays
// within [0, 1], so it neither overflows nor loses precision for large c,
// as a^c / c! would.
func ErlangB(c int, a float64) float64 {
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return b
}

// MinQueuePerReplica is the lowest queue target the plan gives KEDA. The HPA
// wants ⌈waiting requests / target⌉ replicas, so a target of 0.05 turns two
// waiting requests into 40 replicas: below one waiting request per replica
// the autoscaler runs away on noise. Pooled fleets queue little, which is
// when the floor acts.
var MinQueuePerReplica = model.NewDecimal(1, 1)

// QueueFloored tells whether the model's queue target was raised to
// MinQueuePerReplica.
func (r Result) QueueFloored() bool { return r.QueueModel.Cmp(MinQueuePerReplica) < 0 }

// Plan computes the capacity plan of a TTFT SLO whose autoscaling section
// carries the capacity facts (peak requests per second and mean service time;
// per-replica concurrency optional).
func Plan(slo model.SLO) (Result, error) {
	a := slo.Autoscaling
	if a == nil {
		return Result{}, fmt.Errorf("slo %s: capacity plan needs an autoscaling section", slo.Name)
	}
	if slo.Inference == nil || slo.Inference.Role != "ttft" {
		return Result{}, fmt.Errorf("slo %s: capacity plan needs a ttft SLO, whose threshold is the TTFT target", slo.Name)
	}
	c := a.Capacity
	zero, one := model.NewDecimal(0, 1), model.NewDecimal(1, 1)
	switch {
	case c.PeakRPS.Cmp(zero) <= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs capacity.peakRPS above zero", slo.Name)
	case c.MeanServiceTime <= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs capacity.meanServiceTime above zero", slo.Name)
	case c.ReplicaConcurrency.Cmp(zero) < 0:
		return Result{}, fmt.Errorf("slo %s: capacity.replicaConcurrency must not be negative", slo.Name)
	case !c.ReplicaConcurrency.IsZero() && c.ReplicaConcurrency.Cmp(one) < 0:
		return Result{}, fmt.Errorf("slo %s: capacity.replicaConcurrency %s is under one slot; a replica serves at least one request at a time", slo.Name, c.ReplicaConcurrency)
	case c.ReplicaConcurrency.Cmp(model.NewDecimal(MaxSlots, 1)) > 0:
		return Result{}, fmt.Errorf("slo %s: capacity.replicaConcurrency %s is above %d slots per replica", slo.Name, c.ReplicaConcurrency, MaxSlots)
	case slo.Inference.Threshold.Cmp(zero) <= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs a TTFT threshold above zero", slo.Name)
	case slo.Objective.Cmp(zero) <= 0 || slo.Objective.Cmp(one) >= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs an objective between 0 and 1, the share of TTFTs within the threshold", slo.Name)
	}
	r := Result{
		Service:     slo.Service.Name,
		SLO:         slo.Name,
		PeakRPS:     c.PeakRPS,
		ServiceTime: model.NewDecimal(int64(c.MeanServiceTime), int64(time.Second)),
		Target:      slo.Inference.Threshold,
		Budget:      slo.ErrorBudget(),
		Slots:       one,
	}
	if !c.ReplicaConcurrency.IsZero() {
		r.Slots, r.SlotsMeasured = c.ReplicaConcurrency, true
	}
	r.Servers = floor(r.Slots)
	r.Concurrency = r.PeakRPS.Mul(r.ServiceTime)
	r.Model = NewModel(r.ServiceTime.Float(), r.Target.Float(), r.Budget.Float())
	r.Replicas = r.Model.Replicas(r.PeakRPS.Float(), r.Servers)
	if r.Replicas == 0 {
		return Result{}, fmt.Errorf("slo %s: the prompts whose prefill alone passes the threshold take the whole error budget; no replica count holds the objective", slo.Name)
	}
	r.AtPeak = Queue{Servers: r.Replicas * r.Servers, Load: r.Concurrency.Float()}
	r.Utilisation = down(r.AtPeak.Utilisation(), 1000)
	r.QueueModel = down(r.AtPeak.MeanQueue()/float64(r.Replicas), 100)
	if r.QueueModel.IsZero() {
		// KEDA needs a positive target.
		r.QueueModel = model.NewDecimal(1, 100)
	}
	r.QueuePerReplica = r.QueueModel
	if r.QueueFloored() {
		r.QueuePerReplica = MinQueuePerReplica
	}
	return r, nil
}

// down rounds x down to a multiple of 1/per (a lower target scales
// earlier).
func down(x float64, per int64) model.Decimal {
	return model.NewDecimal(int64(math.Floor(x*float64(per))), per)
}

// Need is the plan's replicas at rps requests per second.
func (r Result) Need(rps float64) int {
	if rps <= 0 {
		return 0
	}
	return r.Model.Replicas(rps, r.Servers)
}

// Reserve is β of the square-root staffing k = L + β·√L that the KEDA load
// trigger keeps at a load of L erlangs: the one that keeps N replicas over
// the headroom (a share in (0, 1]) at the plan's peak, β = (N·c / h − L) / √L.
// A fleet whose arrivals are Poisson swings by √L requests in service, so
// the reserve grows as √L, and at a third of the peak it is relatively
// larger: what carries the start of a climb while added replicas start.
func (r Result) Reserve(headroom float64) float64 {
	l := r.Concurrency.Float()
	if headroom <= 0 || l <= 0 {
		return math.NaN()
	}
	return (float64(r.Replicas*r.Servers)/headroom - l) / math.Sqrt(l)
}

// floor rounds an exact decimal down: the float estimate is corrected by
// exact comparisons so that 2.9999999999999 never rounds to 3.
func floor(d model.Decimal) int {
	n := int(math.Floor(d.Float()))
	for model.NewDecimal(int64(n), 1).Cmp(d) > 0 {
		n--
	}
	for model.NewDecimal(int64(n+1), 1).Cmp(d) <= 0 {
		n++
	}
	return n
}

// Explain prints the plan as formulas with the numbers filled in.
func (r Result) Explain() string {
	var b strings.Builder
	slots := r.Slots.String() + " (measured)"
	switch {
	case !r.SlotsMeasured:
		slots = "1 (no replicaConcurrency given: one request at a time)"
	case model.NewDecimal(int64(r.Servers), 1).Cmp(r.Slots) != 0:
		slots = fmt.Sprintf("%d (measured %s, rounded down to whole slots)", r.Servers, r.Slots)
	}
	var mix []string
	for _, c := range r.Model.Prefill {
		m := fmt.Sprintf("%s%% in %ss", figure(100*c.Share), figure(c.Seconds))
		if c.Seconds >= r.Model.Target {
			m += " (past T whatever the load)"
		}
		mix = append(mix, m)
	}
	fmt.Fprintf(&b, "service %s (TTFT target from SLO %s)\n", r.Service, r.SLO)
	fmt.Fprintf(&b, "  peak load          λ = %s requests/s, mean service time S = %ss, TTFT target T = %ss\n",
		r.PeakRPS, r.ServiceTime, r.Target)
	fmt.Fprintf(&b, "  slots per replica  c = %s\n", slots)
	fmt.Fprintf(&b, "  Little's law       L = λ × S = %s × %s = %s requests in service\n",
		r.PeakRPS, r.ServiceTime, r.Concurrency)
	fmt.Fprintf(&b, "  TTFT model         prefill, then the wait in one queue before the fleet's k = N · c slots\n")
	fmt.Fprintf(&b, "                       (a load-aware gateway routes to a free slot: M/M/k, Erlang C)\n")
	fmt.Fprintf(&b, "  prefill (assumed)  %s\n", strings.Join(mix, ", "))
	fmt.Fprintf(&b, "  objective          miss = Σ share · C(k, L) · exp(−(k − L) · (T − prefill) / S) ≤ %s, the error budget\n", r.Budget)
	fmt.Fprintf(&b, "  replicas           N = %d, the fewest that meet it:\n", r.Replicas)
	fmt.Fprintf(&b, "                       %s\n", r.explainAt(r.Replicas))
	if r.Replicas > 1 {
		fmt.Fprintf(&b, "                       %s\n", r.explainAt(r.Replicas-1))
	}
	fmt.Fprintf(&b, "  queue per replica  C(k, L) · ρ / (1 − ρ) / N = %s → %s waiting requests (KEDA queue target)\n",
		figure(r.AtPeak.MeanQueue()/float64(r.Replicas)), r.QueueModel)
	if r.QueueFloored() {
		fmt.Fprintf(&b, "                       raised to %s: a target under one waiting request per replica lets the autoscaler run away\n", r.QueuePerReplica)
	}
	return b.String()
}

// explainAt prints the fleet's queue at peak with n replicas.
func (r Result) explainAt(n int) string {
	q := Queue{Servers: n * r.Servers, Load: r.Concurrency.Float()}
	head := fmt.Sprintf("N = %d: k = %d, ρ = %s%%", n, q.Servers, figure(100*q.Utilisation()))
	if !q.Stable() {
		return head + ", L ≥ k: the queue grows without bound"
	}
	miss := r.Model.Miss(q.Servers, q.Load)
	verdict := "≤"
	if miss > r.Model.Budget {
		verdict = ">"
	}
	return fmt.Sprintf("%s, C(%d, %s) = %s, miss = %s %s %s", head, q.Servers, figure(q.Load), figure(q.ErlangC()), figure(miss), verdict, r.Budget)
}

// figure prints a model figure to four significant digits.
func figure(f float64) string {
	return strconv.FormatFloat(f, 'g', 4, 64)
}

// ForService plans the service whose SLOs are given (all of one service, in
// name order). It uses the first TTFT SLO with capacity facts; ok is false
// when no SLO of the service carries capacity facts.
func ForService(slos []model.SLO) (r Result, ok bool, err error) {
	var withFacts []model.SLO
	for _, slo := range slos {
		if a := slo.Autoscaling; a != nil && (!a.Capacity.PeakRPS.IsZero() || a.Capacity.MeanServiceTime != 0) {
			withFacts = append(withFacts, slo)
		}
	}
	if len(withFacts) == 0 {
		return Result{}, false, nil
	}
	for _, slo := range withFacts {
		if slo.Inference != nil && slo.Inference.Role == "ttft" {
			r, err := Plan(slo)
			return r, err == nil, err
		}
	}
	return Result{}, false, fmt.Errorf("service %s: capacity facts are given but no ttft SLO carries them; the plan needs its TTFT threshold", withFacts[0].Service.Name)
}

// Plans returns the plan of every service that gives capacity facts, in
// service order.
func Plans(set model.Set) ([]Result, error) {
	var out []Result
	for _, service := range set.PerService() {
		r, ok, err := ForService(service.SLOs)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}
