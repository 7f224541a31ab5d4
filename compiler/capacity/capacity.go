// Package capacity sizes an inference deployment for its peak load: how many
// replicas keep the TTFT target, and the per-replica queue depth the KEDA
// queue trigger should hold. It is pure arithmetic on the model.
package capacity

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// TailProbability is the share of requests allowed to wait in queue longer
// than the TTFT target in the M/M/1 model behind Ceiling.
//
// It is calibrated, not derived from the SLO's 99%: the utilisation ceilings
// we document (about 63%, 70% and 75% for 300, 400 and 500ms at a 40ms mean
// service time, and 58 replicas for 1,000 requests/s) are what a 3.5%
// waiting-time tail gives. A strict 1% tail would allow only 59.2%
// utilisation at 400ms/40ms (68 replicas for the same load). The KEDA TTFT
// trigger, which watches the real p99 against the threshold with headroom, is
// what guards the tail the model leaves open.
const TailProbability = 0.035

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
	// Slots is c, concurrent requests one replica serves; 1 when unmeasured.
	Slots         model.Decimal
	SlotsMeasured bool
	// Concurrency is L = λ × S, requests in service at peak (Little's law).
	Concurrency model.Decimal
	// Ceiling is ρ, the utilisation each replica may run at (see Ceiling).
	Ceiling model.Decimal
	// Replicas is ⌈L / (c × ρ)⌉.
	Replicas int
	// QueueModel is the mean number of waiting requests per replica at the
	// ceiling, ρ² / (1 − ρ), rounded down to hundredths.
	QueueModel model.Decimal
	// QueuePerReplica is the AverageValue target of the KEDA queue
	// trigger: QueueModel, and never below MinQueuePerReplica.
	QueuePerReplica model.Decimal
}

// MinQueuePerReplica is the lowest queue target the plan gives KEDA. The HPA
// wants ⌈waiting requests / target⌉ replicas, so a target of 0.05 turns two
// waiting requests into 40 replicas: below one waiting request per replica
// the autoscaler runs away on noise. Replicas with many slots queue little
// (ρ²/(1−ρ) stays under one up to ρ ≈ 0.618), which is when the floor acts.
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
	switch {
	case c.PeakRPS.Cmp(model.NewDecimal(0, 1)) <= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs capacity.peakRPS above zero", slo.Name)
	case c.MeanServiceTime <= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs capacity.meanServiceTime above zero", slo.Name)
	case c.ReplicaConcurrency.Cmp(model.NewDecimal(0, 1)) < 0:
		return Result{}, fmt.Errorf("slo %s: capacity.replicaConcurrency must not be negative", slo.Name)
	case slo.Inference.Threshold.Cmp(model.NewDecimal(0, 1)) <= 0:
		return Result{}, fmt.Errorf("slo %s: capacity plan needs a TTFT threshold above zero", slo.Name)
	}
	r := Result{
		Service:     slo.Service.Name,
		SLO:         slo.Name,
		PeakRPS:     c.PeakRPS,
		ServiceTime: model.NewDecimal(int64(c.MeanServiceTime), int64(time.Second)),
		Target:      slo.Inference.Threshold,
		Slots:       model.NewDecimal(1, 1),
	}
	if !c.ReplicaConcurrency.IsZero() {
		r.Slots, r.SlotsMeasured = c.ReplicaConcurrency, true
	}
	r.Concurrency = r.PeakRPS.Mul(r.ServiceTime)
	r.Ceiling = Ceiling(r.Target.Float(), r.ServiceTime.Float(), r.Slots.Float())
	r.Replicas = ceil(r.Concurrency.Quo(r.Slots.Mul(r.Ceiling)))
	r.QueueModel = queueAtCeiling(r.Ceiling)
	r.QueuePerReplica = r.QueueModel
	if r.QueueFloored() {
		r.QueuePerReplica = MinQueuePerReplica
	}
	return r, nil
}

// Ceiling is the highest utilisation ρ at which a replica keeps the TTFT
// target T (seconds), given the mean service time S (seconds) and c slots.
//
// Model: a replica is an M/M/1 queue whose server completes c requests per S
// (c slots working at once; for c = 1 this is exactly M/M/1, for c > 1 it
// bounds M/M/c from above because Erlang's probability of waiting is at most
// ρ). Its waiting time W has the tail
//
//	P(W > t) = ρ · exp(−c · (1 − ρ) · t / S)
//
// so the p-th percentile of waiting is S · ln(ρ / (1 − p)) / (c · (1 − ρ)).
// The ceiling is the largest ρ whose waiting time exceeds T for at most
// TailProbability of requests: the root of ρ · exp(−c(1−ρ)T/S) = q, found by
// bisection (the tail grows with ρ), rounded down to a thousandth so the plan
// prints exactly and errs towards more replicas. At S = 40ms, c = 1 it gives
// 61.7% for T = 300ms, 70.0% for 400ms and 75.4% for 500ms.
func Ceiling(target, serviceTime, slots float64) model.Decimal {
	q := TailProbability
	tail := func(rho float64) float64 { return rho * math.Exp(-slots*(1-rho)*target/serviceTime) }
	lo, hi := q, 1.0 // tail(q) ≤ q and tail(1) = 1 > q
	for range 200 {
		mid := (lo + hi) / 2
		if tail(mid) <= q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return model.NewDecimal(int64(math.Floor(lo*1000)), 1000)
}

// WaitTail is P(W > T) of the model at utilisation rho (see Ceiling).
func WaitTail(rho, target, serviceTime, slots float64) float64 {
	return rho * math.Exp(-slots*(1-rho)*target/serviceTime)
}

// queueAtCeiling is ρ² / (1 − ρ), the M/M/1 mean queue length, rounded down
// to hundredths (a lower target scales earlier) and at least 0.01, since KEDA
// needs a positive target.
func queueAtCeiling(rho model.Decimal) model.Decimal {
	one := model.NewDecimal(1, 1)
	lq := rho.Mul(rho).Quo(one.Sub(rho))
	hundredths := floor(lq.Mul(model.NewDecimal(100, 1)))
	if hundredths < 1 {
		hundredths = 1
	}
	return model.NewDecimal(int64(hundredths), 100)
}

// ceil and floor round exact decimals: the float estimate is corrected by
// exact comparisons so that 57.0000000001 never rounds to 57.
func ceil(d model.Decimal) int {
	n := int(math.Ceil(d.Float()))
	for model.NewDecimal(int64(n), 1).Cmp(d) < 0 {
		n++
	}
	for model.NewDecimal(int64(n-1), 1).Cmp(d) >= 0 {
		n--
	}
	return n
}

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
	one := model.NewDecimal(1, 1)
	slots := r.Slots.String() + " (measured)"
	if !r.SlotsMeasured {
		slots = "1 (no replicaConcurrency given: one request at a time)"
	}
	perReplica := r.Concurrency.Quo(r.Slots.Mul(r.Ceiling))
	lq := r.Ceiling.Mul(r.Ceiling)
	fmt.Fprintf(&b, "service %s (TTFT target from SLO %s)\n", r.Service, r.SLO)
	fmt.Fprintf(&b, "  peak load          λ = %s requests/s, mean service time S = %ss, TTFT target T = %ss\n",
		r.PeakRPS, r.ServiceTime, r.Target)
	fmt.Fprintf(&b, "  slots per replica  c = %s\n", slots)
	fmt.Fprintf(&b, "  Little's law       L = λ × S = %s × %s = %s requests in service\n",
		r.PeakRPS, r.ServiceTime, r.Concurrency)
	fmt.Fprintf(&b, "  ceiling            ρ = largest utilisation with P(wait > T) = ρ·exp(−c·(1−ρ)·T/S) ≤ %s (M/M/1)\n",
		model.DecimalFromFloat(TailProbability))
	tail := WaitTail(r.Ceiling.Float(), r.Target.Float(), r.ServiceTime.Float(), r.Slots.Float())
	fmt.Fprintf(&b, "                       = %s (%s); the wait tail there is %s\n",
		r.Ceiling, r.Ceiling.Percent(), model.DecimalFromFloat(math.Round(tail*1e4)/1e4))
	fmt.Fprintf(&b, "  replicas           N = ⌈L / (c × ρ)⌉ = ⌈%s / (%s × %s)⌉ = ⌈%s⌉ = %d\n",
		r.Concurrency, r.Slots, r.Ceiling, perReplica, r.Replicas)
	fmt.Fprintf(&b, "  queue per replica  Lq = ρ² / (1 − ρ) = %s / %s = %s → %s waiting requests (KEDA queue target)\n",
		lq, one.Sub(r.Ceiling), lq.Quo(one.Sub(r.Ceiling)), r.QueueModel)
	if r.QueueFloored() {
		fmt.Fprintf(&b, "                       raised to %s: a target under one waiting request per replica lets the autoscaler run away\n", r.QueuePerReplica)
	}
	return b.String()
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
