// Package capacity sizes an inference deployment for its peak load: how many
// replicas keep the TTFT target, and the per-replica queue depth the KEDA
// queue trigger should hold. It is pure arithmetic on the model.
package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// TailProbability is the share of requests allowed to wait in queue longer
// than the TTFT target in the Erlang C model behind Plan.
//
// It is calibrated, not derived from the SLO's 99%: the utilisation ceilings
// we document for one slot per replica (about 63%, 70% and 75% for 300, 400
// and 500ms at a 40ms mean service time, and 58 replicas for 1,000
// requests/s) are what a 3.5% waiting-time tail gives. A strict 1% tail would
// allow only 59.2% utilisation at 400ms/40ms (68 replicas for the same load).
// The KEDA TTFT trigger, which watches the real latency against the
// threshold, is what guards the tail the model leaves open.
const TailProbability = 0.035

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
	// Slots is the concurrency the spec measured per replica; 1 when
	// unmeasured.
	Slots         model.Decimal
	SlotsMeasured bool
	// Servers is c, the whole slots of a replica the queueing model uses:
	// Slots rounded down, since a slot serves a whole request.
	Servers int
	// Concurrency is L = λ × S, requests in service at peak (Little's law).
	Concurrency model.Decimal
	// Replicas is N, the fewest replicas whose wait tail at peak is at most
	// TailProbability.
	Replicas int
	// AtPeak is the queueing model of one replica at peak with N replicas.
	AtPeak Queue
	// Ceiling is ρ, the highest utilisation at which a replica keeps the
	// wait tail within TailProbability, rounded down to a thousandth.
	Ceiling model.Decimal
	// QueueModel is the mean number of waiting requests per replica at the
	// ceiling, C(c, cρ) · ρ / (1 − ρ), rounded down to hundredths.
	QueueModel model.Decimal
	// QueuePerReplica is the AverageValue target of the KEDA queue
	// trigger: QueueModel, and never below MinQueuePerReplica.
	QueuePerReplica model.Decimal
}

// Queue is one replica as an M/M/c queue: c slots, each serving a request
// in a mean time S, offered a = λ × S erlangs.
type Queue struct {
	Servers int
	Load    float64 // a, in erlangs
	// Target over ServiceTime is T / S, the TTFT target in service times.
	TargetOverService float64
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

// WaitTail is P(wait > T) = C(c, a) · exp(−(c − a) · T / S): with all c
// slots busy, slots free up at rate c/S while requests arrive at a/S, so a
// waiting request's wait is exponential with rate (c − a)/S. For c = 1 it is
// the M/M/1 tail ρ · exp(−(1 − ρ) · T / S).
func (q Queue) WaitTail() float64 {
	if !q.Stable() {
		return 1
	}
	return q.ErlangC() * math.Exp(-(float64(q.Servers)-q.Load)*q.TargetOverService)
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
// the autoscaler runs away on noise. Replicas with many slots queue little,
// which is when the floor acts.
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
	one := model.NewDecimal(1, 1)
	switch {
	case c.PeakRPS.Cmp(model.NewDecimal(0, 1)) <= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs capacity.peakRPS above zero", slo.Name)
	case c.MeanServiceTime <= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs capacity.meanServiceTime above zero", slo.Name)
	case c.ReplicaConcurrency.Cmp(model.NewDecimal(0, 1)) < 0:
		return Result{}, fmt.Errorf("slo %s: capacity.replicaConcurrency must not be negative", slo.Name)
	case !c.ReplicaConcurrency.IsZero() && c.ReplicaConcurrency.Cmp(one) < 0:
		return Result{}, fmt.Errorf("slo %s: capacity.replicaConcurrency %s is under one slot; a replica serves at least one request at a time", slo.Name, c.ReplicaConcurrency)
	case c.ReplicaConcurrency.Cmp(model.NewDecimal(MaxSlots, 1)) > 0:
		return Result{}, fmt.Errorf("slo %s: capacity.replicaConcurrency %s is above %d slots per replica", slo.Name, c.ReplicaConcurrency, MaxSlots)
	case slo.Inference.Threshold.Cmp(model.NewDecimal(0, 1)) <= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs a TTFT threshold above zero", slo.Name)
	}
	r := Result{
		Service:     slo.Service.Name,
		SLO:         slo.Name,
		PeakRPS:     c.PeakRPS,
		ServiceTime: model.NewDecimal(int64(c.MeanServiceTime), int64(time.Second)),
		Target:      slo.Inference.Threshold,
		Slots:       one,
	}
	if !c.ReplicaConcurrency.IsZero() {
		r.Slots, r.SlotsMeasured = c.ReplicaConcurrency, true
	}
	r.Servers = floor(r.Slots)
	r.Concurrency = r.PeakRPS.Mul(r.ServiceTime)
	ratio := r.Target.Quo(r.ServiceTime).Float()
	r.Replicas = Replicas(r.Concurrency.Float(), r.Servers, ratio)
	r.AtPeak = r.perReplica(r.Replicas)
	r.Ceiling = Ceiling(r.Target.Float(), r.ServiceTime.Float(), r.Servers)
	r.QueueModel = queueAtCeiling(r.Ceiling, r.Servers)
	r.QueuePerReplica = r.QueueModel
	if r.QueueFloored() {
		r.QueuePerReplica = MinQueuePerReplica
	}
	return r, nil
}

// perReplica is one replica's queue at peak when n replicas share the load.
func (r Result) perReplica(n int) Queue {
	return Queue{
		Servers:           r.Servers,
		Load:              r.Concurrency.Quo(model.NewDecimal(int64(n), 1)).Float(),
		TargetOverService: r.Target.Quo(r.ServiceTime).Float(),
	}
}

// Replicas is the fewest replicas of c slots that carry L erlangs with a wait
// tail of at most TailProbability, the TTFT target being targetOverService
// service times. The tail falls as replicas are added (each is offered
// less), so the count is found by bisection.
func Replicas(load float64, servers int, targetOverService float64) int {
	meets := func(n int) bool {
		return Queue{Servers: servers, Load: load / float64(n), TargetOverService: targetOverService}.WaitTail() <= TailProbability
	}
	lo := int(load / float64(servers)) // lo replicas cannot carry the load: a ≥ c
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
	return hi
}

// Ceiling is the highest utilisation ρ at which a replica of c slots keeps
// the TTFT target T (seconds) given the mean service time S (seconds): the
// largest ρ whose wait tail (see Queue.WaitTail, at a = c·ρ) is at most
// TailProbability, found by bisection (the tail grows with ρ) and rounded
// down to a thousandth so it prints exactly and errs towards scaling early.
// At S = 40ms, c = 1 it gives 61.7% for T = 300ms, 70.0% for 400ms and 75.4%
// for 500ms.
func Ceiling(target, serviceTime float64, servers int) model.Decimal {
	tail := func(rho float64) float64 {
		return Queue{Servers: servers, Load: rho * float64(servers), TargetOverService: target / serviceTime}.WaitTail()
	}
	lo, hi := 0.0, 1.0 // tail(0) = 0 and tail(1) = 1
	for range 100 {
		mid := (lo + hi) / 2
		if tail(mid) <= TailProbability {
			lo = mid
		} else {
			hi = mid
		}
	}
	return model.NewDecimal(int64(math.Floor(lo*1000)), 1000)
}

// queueAtCeiling is the M/M/c mean queue length at utilisation ρ,
// C(c, cρ) · ρ / (1 − ρ) (ρ² / (1 − ρ) for one slot), rounded down to
// hundredths (a lower target scales earlier) and at least 0.01, since KEDA
// needs a positive target.
func queueAtCeiling(rho model.Decimal, servers int) model.Decimal {
	lq := meanQueue(rho, servers)
	hundredths := floor(lq.Mul(model.NewDecimal(100, 1)))
	if hundredths < 1 {
		hundredths = 1
	}
	return model.NewDecimal(int64(hundredths), 100)
}

// meanQueue is C(c, cρ) · ρ / (1 − ρ), exact for one slot, where C = ρ.
func meanQueue(rho model.Decimal, servers int) model.Decimal {
	waits := rho
	if servers > 1 {
		q := Queue{Servers: servers, Load: rho.Float() * float64(servers)}
		waits = model.DecimalFromFloat(q.ErlangC())
	}
	return waits.Mul(rho).Quo(model.NewDecimal(1, 1).Sub(rho))
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
	q := model.DecimalFromFloat(TailProbability)
	fmt.Fprintf(&b, "service %s (TTFT target from SLO %s)\n", r.Service, r.SLO)
	fmt.Fprintf(&b, "  peak load          λ = %s requests/s, mean service time S = %ss, TTFT target T = %ss\n",
		r.PeakRPS, r.ServiceTime, r.Target)
	fmt.Fprintf(&b, "  slots per replica  c = %s\n", slots)
	fmt.Fprintf(&b, "  Little's law       L = λ × S = %s × %s = %s requests in service\n",
		r.PeakRPS, r.ServiceTime, r.Concurrency)
	fmt.Fprintf(&b, "  wait model         each replica an M/M/c queue (Erlang C) offered a = L / N erlangs:\n")
	fmt.Fprintf(&b, "                       P(wait > T) = C(c, a) · exp(−(c − a) · T / S) ≤ %s, T / S = %s\n",
		q, r.Target.Quo(r.ServiceTime))
	fmt.Fprintf(&b, "  replicas           N = %d, the fewest that meet it:\n", r.Replicas)
	fmt.Fprintf(&b, "                       %s\n", r.AtPeak.explain(r.Replicas))
	if r.Replicas > 1 {
		fmt.Fprintf(&b, "                       %s\n", r.perReplica(r.Replicas-1).explain(r.Replicas-1))
	}
	fmt.Fprintf(&b, "  ceiling            ρ = largest utilisation with P(wait > T) ≤ %s = %s (%s)\n",
		q, r.Ceiling, r.Ceiling.Percent())
	fmt.Fprintf(&b, "  queue per replica  Lq = C(c, c·ρ) · ρ / (1 − ρ) = %s → %s waiting requests (KEDA queue target)\n",
		meanQueue(r.Ceiling, r.Servers), r.QueueModel)
	if r.QueueFloored() {
		fmt.Fprintf(&b, "                       raised to %s: a target under one waiting request per replica lets the autoscaler run away\n", r.QueuePerReplica)
	}
	return b.String()
}

// explain prints the queue of one replica when n replicas share the load.
func (q Queue) explain(n int) string {
	head := fmt.Sprintf("N = %d: a = %s, ρ = %s%%", n, figure(q.Load), figure(100*q.Utilisation()))
	if !q.Stable() {
		return head + ", a ≥ c: the queue grows without bound"
	}
	tail := q.WaitTail()
	verdict := "≤"
	if tail > TailProbability {
		verdict = ">"
	}
	return fmt.Sprintf("%s, C(%d, %s) = %s, P(wait > T) = %s · exp(−%s) = %s %s %s",
		head, q.Servers, figure(q.Load), figure(q.ErlangC()),
		figure(q.ErlangC()), figure((float64(q.Servers)-q.Load)*q.TargetOverService),
		figure(tail), verdict, model.DecimalFromFloat(TailProbability))
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
