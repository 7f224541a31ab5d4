// Package keda is the autoscaling backend: one KEDA ScaledObject per service
// whose SLOs ask for autoscaling, with Prometheus triggers that act before the
// SLO burns (TTFT tail against the threshold with headroom, queue depth per
// replica, optionally the base-window burn rate).
package keda

import (
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/capacity"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/spec/engine"
)

// Path is where a service's ScaledObject goes in the output folder.
func Path(service string) string { return "keda/" + service + ".yaml" }

// FallbackFailureThreshold is how many failed Prometheus queries in a row
// switch KEDA to the fallback replica count.
const FallbackFailureThreshold = 3

// minRateWindow is the range of the TTFT trigger's rate(): short enough to
// act before the SLO's own 5m burn rate moves.
const minRateWindow = 5 * time.Minute

// knownKinds are the scale-target kinds whose API group inferslo knows; KEDA
// would assume apps/v1 for any other kind, which is wrong outside apps.
const knownKinds = "Deployment, LeaderWorkerSet, Rollout, StatefulSet"

func targetAPIVersion(kind string) (string, bool) {
	switch kind {
	case "Deployment", "StatefulSet":
		return "apps/v1", true
	case "LeaderWorkerSet":
		return "leaderworkerset.x-k8s.io/v1", true
	case "Rollout":
		return "argoproj.io/v1alpha1", true
	}
	return "", false
}

// Build returns one validated ScaledObject per service with autoscaling, and
// warnings the compiler should print (such as a max replica count below the
// capacity plan).
func Build(set model.Set) (artifact.Set, []string, error) {
	var files artifact.Set
	var warnings []string
	for _, svc := range set.PerService() {
		service, slos := svc.Name, withAutoscaling(svc.SLOs)
		if len(slos) == 0 {
			continue
		}
		obj, warns, err := scaledObjectOf(service, slos)
		if err != nil {
			return nil, nil, fmt.Errorf("service %s: %w", service, err)
		}
		data, err := marshal(obj, model.Sources(slos))
		if err != nil {
			return nil, nil, fmt.Errorf("service %s: %w", service, err)
		}
		files = append(files, artifact.File{Path: Path(service), Data: data})
		warnings = append(warnings, warns...)
	}
	if err := files.Check(); err != nil {
		return nil, nil, err
	}
	return files, warnings, nil
}

func withAutoscaling(slos []model.SLO) []model.SLO {
	var out []model.SLO
	for _, slo := range slos {
		if slo.Autoscaling != nil {
			out = append(out, slo)
		}
	}
	return out
}

// settings returns the service's one autoscaling section: SLOs of a service
// share a scale target, so they must agree on it.
func settings(slos []model.SLO) (*model.Autoscaling, error) {
	first := slos[0]
	for _, slo := range slos[1:] {
		if key(slo.Autoscaling) != key(first.Autoscaling) {
			return nil, fmt.Errorf("SLOs %s and %s give different autoscaling settings; a service has one scale target", first.Name, slo.Name)
		}
	}
	return first.Autoscaling, nil
}

// key prints every setting, decimals exactly, so equal settings compare equal
// whatever their internal representation.
func key(a *model.Autoscaling) string {
	c := a.Capacity
	return fmt.Sprintf("%s|%s|%s|%d|%d|%s|%s|%s|%s|%t|%s|%s|%d|%s|%s|%s",
		a.TargetKind, a.TargetName, a.Namespace, a.MinReplicas, a.MaxReplicas, a.ServerAddress,
		a.AuthenticationRef, a.Headroom, a.QueuePerReplica, a.BurnRateTrigger,
		a.ScaleUpStabilization, a.ScaleDownStabilization, a.FallbackReplicas,
		c.PeakRPS, c.MeanServiceTime, c.ReplicaConcurrency)
}

func scaledObjectOf(service string, slos []model.SLO) (scaledObject, []string, error) {
	a, err := settings(slos)
	if err != nil {
		return scaledObject{}, nil, err
	}
	var warnings []string
	plan, planned, err := capacity.ForService(slos)
	if err != nil {
		return scaledObject{}, nil, err
	}
	if planned && a.MaxReplicas < plan.Replicas {
		warnings = append(warnings, fmt.Sprintf(
			"service %s: maxReplicas %d is below the %d replicas the capacity plan needs for %s requests/s at peak (run `inferslo plan` for the arithmetic)",
			service, a.MaxReplicas, plan.Replicas, plan.PeakRPS))
	}

	if a.TargetName == "" {
		return scaledObject{}, nil, fmt.Errorf("autoscaling needs a scale target name")
	}
	if a.ServerAddress == "" {
		return scaledObject{}, nil, fmt.Errorf("autoscaling needs the Prometheus server address KEDA queries")
	}
	kind := a.TargetKind
	if kind == "" {
		kind = "Deployment"
	}
	apiVersion, ok := targetAPIVersion(kind)
	if !ok {
		return scaledObject{}, nil, fmt.Errorf("scale target kind %s is not one of %s", kind, knownKinds)
	}
	for _, d := range []struct {
		what string
		v    time.Duration
	}{{"scale-up stabilization", a.ScaleUpStabilization}, {"scale-down stabilization", a.ScaleDownStabilization}} {
		if d.v%time.Second != 0 {
			return scaledObject{}, nil, fmt.Errorf("%s %s is not a whole number of seconds", d.what, d.v)
		}
	}

	triggers, warns, err := triggersOf(slos, a, plan, planned)
	if err != nil {
		return scaledObject{}, nil, err
	}
	warnings = append(warnings, warns...)

	obj := scaledObject{
		APIVersion: "keda.sh/v1alpha1",
		Kind:       "ScaledObject",
		Metadata: objectMeta{
			Name:      service,
			Namespace: a.Namespace,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "inferslo"},
		},
		Spec: spec{
			ScaleTargetRef:  scaleTarget{APIVersion: apiVersion, Kind: kind, Name: a.TargetName},
			MinReplicaCount: a.MinReplicas,
			MaxReplicaCount: a.MaxReplicas,
			Fallback:        &fallback{FailureThreshold: FallbackFailureThreshold, Replicas: fallbackReplicas(a, plan, planned)},
			Advanced: &advanced{HorizontalPodAutoscalerConfig: &hpaConfig{Behavior: &behavior{
				ScaleUp:   &scalingRules{StabilizationWindowSeconds: int(a.ScaleUpStabilization / time.Second)},
				ScaleDown: &scalingRules{StabilizationWindowSeconds: int(a.ScaleDownStabilization / time.Second)},
			}}},
			Triggers: triggers,
		},
	}
	if err := check(obj); err != nil {
		return scaledObject{}, nil, err
	}
	if err := checkQueries(obj, allowedSeries(slos)); err != nil {
		return scaledObject{}, nil, err
	}
	return obj, warnings, nil
}

// fallbackReplicas is the spec's value, else the capacity plan (kept within
// min and max), else max: when KEDA cannot see Prometheus, serving the SLO
// matters more than saving replicas.
func fallbackReplicas(a *model.Autoscaling, plan capacity.Result, planned bool) int {
	switch {
	case a.FallbackReplicas > 0:
		return a.FallbackReplicas
	case planned:
		return min(max(plan.Replicas, a.MinReplicas), a.MaxReplicas)
	default:
		return a.MaxReplicas
	}
}

// triggersOf builds the Prometheus triggers in a fixed order: TTFT per TTFT
// SLO, queue depth per distinct engine queue, burn rate per SLO.
func triggersOf(slos []model.SLO, a *model.Autoscaling, plan capacity.Result, planned bool) ([]trigger, []string, error) {
	var warnings []string
	headroom := a.Headroom
	if headroom.Cmp(model.NewDecimal(0, 1)) <= 0 || headroom.Cmp(model.NewDecimal(1, 1)) > 0 {
		return nil, nil, fmt.Errorf("headroom %s is not within (0, 1]", headroom)
	}
	base := func(name, query, metricType string, threshold, activation model.Decimal) trigger {
		t := trigger{
			Name:       name,
			Type:       "prometheus",
			MetricType: metricType,
			Metadata: map[string]string{
				"serverAddress":       a.ServerAddress,
				"query":               query,
				"threshold":           threshold.String(),
				"activationThreshold": activation.String(),
				// No samples (no traffic, NaN quantile) reads as 0, not as a
				// failure that would trip the fallback.
				"ignoreNullValues": "true",
			},
		}
		if a.AuthenticationRef != "" {
			t.AuthenticationRef = &authRef{Name: a.AuthenticationRef}
		}
		return t
	}
	var out []trigger

	for _, slo := range slos {
		inf := slo.Inference
		if inf == nil || inf.Role != "ttft" {
			continue
		}
		if inf.Histogram == "" || inf.Threshold.IsZero() {
			return nil, nil, fmt.Errorf("slo %s: the TTFT trigger needs the histogram and threshold", slo.Name)
		}
		// The SLO's objective is the quantile it bounds: 99% under the
		// threshold means the 0.99 quantile stays below it.
		query := fmt.Sprintf("histogram_quantile(%s, sum by (le) (rate(%s[%s])))",
			slo.Objective, selector(inf.Histogram+"_bucket", inf.Selector), model.FormatDuration(rateWindow(slo)))
		if inf.Native {
			// One series per native histogram, no le to keep.
			query = fmt.Sprintf("histogram_quantile(%s, sum(rate(%s[%s])))",
				slo.Objective, selector(inf.Histogram, inf.Selector), model.FormatDuration(rateWindow(slo)))
		}
		// Value, not AverageValue: a latency quantile does not divide by
		// replicas; the HPA scales by observed/target. The quantile comes
		// out in the histogram's unit (milliseconds on Triton).
		out = append(out, base("ttft-"+slo.Name, query, "Value", inf.NativeThreshold().Mul(headroom), model.NewDecimal(0, 1)))
	}

	seenQueue := map[string]bool{}
	for _, slo := range slos {
		inf := slo.Inference
		if inf == nil || inf.Signals.QueueDepth == "" {
			continue
		}
		sel, err := rules.Scoped(inf.Signals.QueueDepth, inf.Selector)
		if err != nil {
			return nil, nil, fmt.Errorf("slo %s: queue-depth gauge: %w", slo.Name, err)
		}
		if seenQueue[sel] {
			continue
		}
		seenQueue[sel] = true
		target := a.QueuePerReplica
		if target.IsZero() {
			if !planned {
				warnings = append(warnings, fmt.Sprintf(
					"service %s: no queue-depth trigger, because neither queuePerReplica nor capacity facts (peakRPS, meanServiceTime) are given", slo.Service.Name))
				continue
			}
			target = plan.QueuePerReplica
		}
		if target.Cmp(model.NewDecimal(0, 1)) < 0 {
			return nil, nil, fmt.Errorf("queuePerReplica %s is negative", target)
		}
		// AverageValue: the HPA divides the summed queue by the replica
		// count, so the target is per replica.
		name := "queue"
		if len(seenQueue) > 1 {
			name = "queue-" + slo.Name
		}
		out = append(out, base(name, fmt.Sprintf("sum(%s)", sel), "AverageValue", target, model.NewDecimal(0, 1)))
	}

	if a.BurnRateTrigger {
		for _, slo := range slos {
			if !slo.ScaleOnBurn {
				continue
			}
			// A burn rate of 1 spends the budget exactly over the window:
			// above it the HPA adds replicas in proportion.
			query := fmt.Sprintf("max(%s)", rules.BurnRate(slo, slo.BaseWindow()))
			out = append(out, base("burn-"+slo.Name, query, "Value", model.NewDecimal(1, 1), model.NewDecimal(1, 1)))
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("autoscaling has no trigger: it needs a ttft SLO, an engine queue-depth series, or burnRateTrigger with an SLO that scales on burn (interactive latency SLOs do by default; others with scaleOnBurn: true)")
	}
	return out, warnings, nil
}

// rateWindow is five minutes, or four scrapes when scrapes are sparser.
func rateWindow(slo model.SLO) time.Duration {
	if w := 4 * slo.ScrapeInterval; w > minRateWindow {
		return w
	}
	return minRateWindow
}

func selector(name, matchers string) string {
	return rules.SeriesSelector(name, matchers)
}

// allowedSeries are the only metric names triggers may read: the engine's
// series named in the model and the recordings of the rules backend.
func allowedSeries(slos []model.SLO) map[string]bool {
	ok := map[string]bool{}
	for _, n := range []string{rules.EventsRate, rules.BadEventsRate, rules.ErrorRatio, rules.BudgetRemaining, rules.Objective, rules.Info} {
		ok[n] = true
	}
	for _, slo := range slos {
		inf := slo.Inference
		if inf == nil {
			continue
		}
		s := inf.Signals
		for _, h := range []string{inf.Histogram, s.TTFT, s.ITL, s.TPOT, s.E2E, s.Queue} {
			if h != "" {
				ok[h+"_bucket"], ok[h+"_count"], ok[h+"_sum"] = true, true, true
				if inf.Native {
					ok[h] = true
				}
			}
		}
		for _, g := range []string{s.QueueDepth, s.Running, s.KVCacheUsage, s.Requests, s.PromptTokens, s.GenerationTokens} {
			for _, n := range engine.MetricNames(g) {
				ok[n] = true
			}
		}
	}
	return ok
}
