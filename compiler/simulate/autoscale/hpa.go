package autoscale

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// The HPA's side of the fleet: what it reads of a ScaledObject and one
// sync of its loop, as the HPA controller runs it.

// hpaTolerance is the HPA's default: no change while observed/target is
// within 10% of 1.
const hpaTolerance = 0.1

// Autoscaler is what the HPA loop reads of a generated ScaledObject.
type Autoscaler struct {
	Name                     string
	MinReplicas, MaxReplicas int
	// FallbackReplicas after FailureThreshold failed queries in a row, for
	// AverageValue triggers only (as KEDA before 2.18); never below the
	// current count (behavior currentReplicasIfHigher), or the current
	// count itself (HoldOnFallback: behavior currentReplicas).
	FallbackReplicas, FailureThreshold int
	HoldOnFallback                     bool
	ScaleUpWindow, ScaleDownWindow     time.Duration
	// ScaleUp and ScaleDown are the HPA's rate policies; nil: the HPA's
	// defaults (up: double or 4 more per 15s, the larger; down: all).
	ScaleUp, ScaleDown *Policies
	Triggers           []Trigger
}

// Policies are one direction's HPA scaling policies.
type Policies struct {
	// Select is Max (the default), Min or Disabled.
	Select string
	Rules  []Policy
}

// Policy is one HPA scaling policy: at most Value pods, or Value percent
// of the replicas at the period's start, per Period.
type Policy struct {
	Percent bool
	Value   int
	Period  time.Duration
}

// DefaultScaleUp and DefaultScaleDown are the HPA's policies when a
// behavior gives none.
var (
	DefaultScaleUp   = Policies{Rules: []Policy{{Percent: true, Value: 100, Period: 15 * time.Second}, {Value: 4, Period: 15 * time.Second}}}
	DefaultScaleDown = Policies{Rules: []Policy{{Percent: true, Value: 100, Period: 15 * time.Second}}}
)

// DefaultScaleDownWindow is the HPA's scale-down stabilization when a
// behavior gives none.
const DefaultScaleDownWindow = 5 * time.Minute

// Trigger is one Prometheus trigger.
type Trigger struct {
	Name, Query string
	// Average: the HPA divides the value by the replica count
	// (AverageValue); otherwise it compares the value itself (Value).
	Average bool
	Target  float64
}

// ParseScaledObject reads the Autoscaler of a ScaledObject inferslo wrote.
func ParseScaledObject(data []byte) (Autoscaler, error) {
	var o struct {
		Metadata struct{ Name string }
		Spec     struct {
			MinReplicaCount int `yaml:"minReplicaCount"`
			MaxReplicaCount int `yaml:"maxReplicaCount"`
			Fallback        struct {
				FailureThreshold int    `yaml:"failureThreshold"`
				Replicas         int    `yaml:"replicas"`
				Behavior         string `yaml:"behavior"`
			}
			Advanced struct {
				HorizontalPodAutoscalerConfig struct {
					Behavior map[string]struct {
						StabilizationWindowSeconds *int   `yaml:"stabilizationWindowSeconds"`
						SelectPolicy               string `yaml:"selectPolicy"`
						Policies                   []struct {
							Type          string
							Value         int
							PeriodSeconds int `yaml:"periodSeconds"`
						}
					}
				} `yaml:"horizontalPodAutoscalerConfig"`
			}
			Triggers []struct {
				Name       string
				Type       string
				MetricType string `yaml:"metricType"`
				Metadata   map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(data, &o); err != nil {
		return Autoscaler{}, fmt.Errorf("read ScaledObject: %w", err)
	}
	if b := o.Spec.Fallback.Behavior; b != "" && b != "currentReplicasIfHigher" && b != "currentReplicas" {
		return Autoscaler{}, fmt.Errorf("fallback behavior %s is not simulated", b)
	}
	b := o.Spec.Advanced.HorizontalPodAutoscalerConfig.Behavior
	a := Autoscaler{
		Name:        o.Metadata.Name,
		MinReplicas: o.Spec.MinReplicaCount, MaxReplicas: o.Spec.MaxReplicaCount,
		FallbackReplicas: o.Spec.Fallback.Replicas, FailureThreshold: o.Spec.Fallback.FailureThreshold,
		HoldOnFallback:  o.Spec.Fallback.Behavior == "currentReplicas",
		ScaleDownWindow: DefaultScaleDownWindow,
	}
	if w := b["scaleUp"].StabilizationWindowSeconds; w != nil {
		a.ScaleUpWindow = time.Duration(*w) * time.Second
	}
	if w := b["scaleDown"].StabilizationWindowSeconds; w != nil {
		a.ScaleDownWindow = time.Duration(*w) * time.Second
	}
	for dir, to := range map[string]**Policies{"scaleUp": &a.ScaleUp, "scaleDown": &a.ScaleDown} {
		r := b[dir]
		if len(r.Policies) == 0 && r.SelectPolicy == "" {
			continue
		}
		p := &Policies{Select: r.SelectPolicy}
		for _, x := range r.Policies {
			if x.Type != "Pods" && x.Type != "Percent" || x.PeriodSeconds <= 0 {
				return Autoscaler{}, fmt.Errorf("%s policy %s per %ds is not simulated", dir, x.Type, x.PeriodSeconds)
			}
			p.Rules = append(p.Rules, Policy{Percent: x.Type == "Percent", Value: x.Value, Period: time.Duration(x.PeriodSeconds) * time.Second})
		}
		if len(p.Rules) == 0 {
			def := DefaultScaleUp
			if dir == "scaleDown" {
				def = DefaultScaleDown
			}
			p.Rules = def.Rules
		}
		*to = p
	}
	for _, t := range o.Spec.Triggers {
		if t.Type != "prometheus" {
			return Autoscaler{}, fmt.Errorf("trigger %s: type %s is not simulated", t.Name, t.Type)
		}
		target, err := strconv.ParseFloat(t.Metadata["threshold"], 64)
		if err != nil {
			return Autoscaler{}, fmt.Errorf("trigger %s: threshold: %w", t.Name, err)
		}
		a.Triggers = append(a.Triggers, Trigger{Name: t.Name, Query: t.Metadata["query"], Average: t.MetricType == "AverageValue", Target: target})
	}
	return a, nil
}

// sync is one HPA sync, as the HPA controller runs it with a behavior:
// each trigger's proposal, the maximum, no scale-in while a trigger fails,
// KEDA's fallback for failing AverageValue triggers, then the
// stabilization windows over the recommendations and the rate policies
// over the scale events of their periods.
func (s *fleetSim) sync(t time.Duration, values []float64) (desired int) {
	a := s.f.Autoscaler
	cur := s.replicas
	ready := s.ready(t)
	failed, valid := false, false
	for j, tr := range a.Triggers {
		v := values[j]
		if math.IsNaN(v) {
			s.failures[j]++
			if tr.Average && a.FailureThreshold > 0 && s.failures[j] >= a.FailureThreshold {
				fallback := max(cur, a.FallbackReplicas)
				if a.HoldOnFallback {
					fallback = cur
				}
				desired, valid = max(desired, fallback), true
				continue
			}
			failed = true
			continue
		}
		s.failures[j] = 0
		valid = true
		desired = max(desired, Propose(tr, v, cur, ready))
	}
	switch {
	case !valid:
		desired = cur
	case failed && desired < cur:
		// The HPA skips a scale-in while any metric cannot be read.
		desired = cur
	}
	desired = min(max(desired, a.MinReplicas), a.MaxReplicas)
	// Stabilization: at least the lowest recommendation of the scale-up
	// window, at most the highest of the scale-down window, each window
	// holding the one made now.
	up, down := desired, desired
	for _, r := range s.history {
		age := t - r.t
		if age < a.ScaleUpWindow {
			up = min(up, r.replicas)
		}
		if age < a.ScaleDownWindow {
			down = max(down, r.replicas)
		}
	}
	s.history = append(s.history, recommendation{t, desired})
	next := min(max(cur, up), down)
	keep := max(a.ScaleUpWindow, a.ScaleDownWindow, time.Hour)
	i := sort.Search(len(s.history), func(i int) bool { return t-s.history[i].t < keep })
	s.history = s.history[i:]
	// The rate policies, over the scale events of each policy's period.
	switch {
	case next > cur:
		next = min(next, max(cur, s.limit(t, cur, a.ScaleUp, DefaultScaleUp, 1)))
	case next < cur:
		next = max(next, min(cur, s.limit(t, cur, a.ScaleDown, DefaultScaleDown, -1)))
	}
	next = min(max(next, a.MinReplicas), a.MaxReplicas)
	if next != cur {
		s.events = append(s.events, recommendation{t, next - cur})
	}
	j := sort.Search(len(s.events), func(i int) bool { return t-s.events[i].t < time.Hour })
	s.events = s.events[j:]
	s.scaleTo(t, next)
	return desired
}

// limit is the HPA's bound on the replica count for one direction (dir 1
// up, -1 down): per policy, the replicas at the start of its period (the
// count less the changes since) plus (or less) what it allows; the
// largest change of them under Max, the smallest under Min.
func (s *fleetSim) limit(t time.Duration, cur int, p *Policies, def Policies, dir int) int {
	if p == nil {
		p = &def
	}
	if p.Select == "Disabled" {
		return cur
	}
	out, first := cur, true
	for _, r := range p.Rules {
		start := cur
		for _, e := range s.events {
			if t-e.t < r.Period {
				start -= e.replicas
			}
		}
		var proposed int
		switch {
		case dir > 0 && r.Percent:
			proposed = int(math.Ceil(float64(start) * (1 + float64(r.Value)/100)))
		case dir > 0:
			proposed = start + r.Value
		case r.Percent:
			proposed = int(float64(start) * (1 - float64(r.Value)/100))
		default:
			proposed = start - r.Value
		}
		// Max picks the largest change: the highest bound up, the lowest down.
		larger := proposed*dir > out*dir
		if first || larger == (p.Select != "Min") {
			out, first = proposed, false
		}
	}
	return out
}

// Propose is one trigger's replica count as the HPA computes it: an
// AverageValue trigger's value divided by the target; a Value trigger's
// ratio to its target times the replicas that serve (the HPA counts ready
// pods for a plain metric); no change within the tolerance.
func Propose(tr Trigger, v float64, cur, ready int) int {
	ratio := v / tr.Target
	if tr.Average {
		ratio = v / float64(max(cur, 1)) / tr.Target
	}
	if cur > 0 && math.Abs(ratio-1) <= hpaTolerance {
		return cur
	}
	if tr.Average {
		return int(math.Ceil(v / tr.Target))
	}
	if cur == 0 {
		return int(math.Ceil(ratio))
	}
	return int(math.Ceil(float64(ready) * ratio))
}
