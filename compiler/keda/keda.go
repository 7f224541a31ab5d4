// Package keda is the autoscaling backend: one KEDA ScaledObject per scale
// target (per declared group of a grouped SLO) whose SLOs ask for
// autoscaling, with Prometheus triggers that act before the SLO burns (the
// share of requests over the TTFT threshold against the share the headroom
// allows, queue depth per replica, optionally the gated base-window burn
// rate).
package keda

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
	"github.com/inferslo/inferslo/spec/engine"
)

// Path is where a service's ScaledObject goes in the output folder.
func Path(service string) string { return "keda/" + service + ".yaml" }

// FallbackFailureThreshold is how many failed Prometheus queries in a row
// switch KEDA to the fallback replica count.
const FallbackFailureThreshold = 3

// MaxStep bounds what the TTFT and queue triggers read against their
// targets: they tell that the fleet is too small, not by how much, so one
// sync asks for at most half as many replicas again as serve. The HPA
// multiplies a Value metric's ratio by the ready pods, so the ask holds
// still while the replicas it asked for start, instead of compounding on
// every sync until they serve.
const MaxStep = 1.5

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

// Backend is the ScaledObject backend of a compilation.
type Backend struct{}

// Name says what the backend builds.
func (Backend) Name() string { return "keda scaledobjects" }

// PerService: a service's ScaledObjects read its own SLOs only.
func (Backend) PerService() bool { return true }

// Build is the package's Build.
func (Backend) Build(set model.Set) (artifact.Set, error) { return Build(set) }

// Build returns one validated ScaledObject per scale target (per group of a
// grouped SLO). The spec reports what a user should know about them (a
// max replica count below the capacity plan, no queue target) at its line.
func Build(set model.Set) (artifact.Set, error) {
	var files artifact.Set
	for _, svc := range set.PerService() {
		slos := withAutoscaling(svc.SLOs)
		if len(slos) == 0 {
			continue
		}
		units, err := unitsOf(svc.Name, slos)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", svc.Name, err)
		}
		for _, u := range units {
			obj, err := scaledObjectOf(u)
			if err != nil {
				return nil, fmt.Errorf("service %s: %s: %w", svc.Name, u.target, err)
			}
			data, err := marshal(obj, model.Sources(u.slos))
			if err != nil {
				return nil, fmt.Errorf("service %s: %w", svc.Name, err)
			}
			files = append(files, artifact.File{Path: Path(u.name), Data: data})
		}
	}
	if err := files.Check(); err != nil {
		return nil, err
	}
	return files, nil
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

// unit is what one ScaledObject scales: a scale target, the SLOs whose
// triggers drive it and, for a grouped SLO, the one group it reads.
type unit struct {
	name   string // the ScaledObject's name
	target string
	slos   []model.SLO
	a      *model.Autoscaling
	group  model.ScaleGroup
}

// unitsOf splits a service's autoscaled SLOs by scale target (several
// specs of one service may each scale their own Deployment) and a grouped
// target by declared group. A service with one ScaledObject names it after
// the service; with several, each is named after its target, which KEDA
// allows one ScaledObject anyway.
func unitsOf(service string, slos []model.SLO) ([]unit, error) {
	var order []string
	byTarget := map[string][]model.SLO{}
	for _, slo := range slos {
		k := slo.Autoscaling.TargetKind + "/" + slo.Autoscaling.TargetName
		if _, ok := byTarget[k]; !ok {
			order = append(order, k)
		}
		byTarget[k] = append(byTarget[k], slo)
	}
	var units []unit
	for _, k := range order {
		group := byTarget[k]
		a, err := settings(group)
		if err != nil {
			return nil, err
		}
		grouped := group[0].GroupBy
		switch {
		case len(grouped) > 0 && len(a.Groups) == 0:
			return nil, fmt.Errorf("SLO %s is grouped by %v, and one ScaledObject would scale %s on every group's traffic; declare the groups to autoscale and name the target per group", group[0].Name, grouped, a.TargetName)
		case len(a.Groups) == 0:
			units = append(units, unit{target: a.TargetName, slos: group, a: a})
		}
		for _, g := range a.Groups {
			units = append(units, unit{target: a.ScaleTargetName(g), slos: group, a: a, group: g})
		}
	}
	seen := map[string]bool{}
	for i := range units {
		units[i].name = service
		if len(units) > 1 {
			units[i].name = units[i].target
		}
		if seen[units[i].target] {
			return nil, fmt.Errorf("two ScaledObjects would scale %s; KEDA allows one per target", units[i].target)
		}
		seen[units[i].target] = true
	}
	return units, nil
}

// settings returns the one autoscaling section of the SLOs that scale a
// target: they must agree on it, and on how they are grouped.
func settings(slos []model.SLO) (*model.Autoscaling, error) {
	first := slos[0]
	for _, slo := range slos[1:] {
		if slo.Autoscaling.Key() != first.Autoscaling.Key() {
			return nil, fmt.Errorf("SLOs %s and %s give different autoscaling settings for one scale target", first.Name, slo.Name)
		}
		if fmt.Sprint(slo.GroupBy) != fmt.Sprint(first.GroupBy) {
			return nil, fmt.Errorf("SLOs %s and %s scale one target but group by %v and %v", first.Name, slo.Name, first.GroupBy, slo.GroupBy)
		}
	}
	return first.Autoscaling, nil
}

func scaledObjectOf(u unit) (scaledObject, error) {
	a, slos := u.a, u.slos
	plan, planned, err := capacity.ForService(slos)
	if err != nil {
		return scaledObject{}, err
	}

	if u.target == "" {
		return scaledObject{}, fmt.Errorf("autoscaling needs a scale target name")
	}
	if a.ServerAddress == "" {
		return scaledObject{}, fmt.Errorf("autoscaling needs the Prometheus server address KEDA queries")
	}
	kind := a.TargetKind
	kind = cmp.Or(kind, "Deployment")
	// A spec's apiVersion names any kind; the known kinds have their own.
	apiVersion, ok := a.TargetAPIVersion, a.TargetAPIVersion != ""
	if !ok {
		apiVersion, ok = targetAPIVersion(kind)
	}
	if !ok {
		return scaledObject{}, fmt.Errorf("scale target kind %s is not one of %s", kind, knownKinds)
	}
	for _, d := range []struct {
		what string
		v    time.Duration
	}{{"scale-up stabilization", a.ScaleUpStabilization}, {"scale-down stabilization", a.ScaleDownStabilization}} {
		if d.v%time.Second != 0 {
			return scaledObject{}, fmt.Errorf("%s %s is not a whole number of seconds", d.what, d.v)
		}
	}

	triggers, err := triggersOf(u, plan, planned)
	if err != nil {
		return scaledObject{}, err
	}

	obj := scaledObject{
		APIVersion: "keda.sh/v1alpha1",
		Kind:       "ScaledObject",
		Metadata: objectMeta{
			Name:      u.name,
			Namespace: a.Namespace,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "inferslo"},
		},
		Spec: spec{
			ScaleTargetRef:  scaleTarget{APIVersion: apiVersion, Kind: kind, Name: u.target},
			MinReplicaCount: a.MinReplicas,
			MaxReplicaCount: a.MaxReplicas,
			Fallback: &fallback{
				FailureThreshold: FallbackFailureThreshold,
				Replicas:         fallbackReplicas(a, plan, planned),
				// A failing query holds the fleet where it is, neither
				// shrinking nor growing it: KEDA 2.17+ reads behavior, and
				// currentReplicasIfHigher would take it to max(current,
				// replicas) on every trigger from 2.18. Replicas is what
				// a KEDA without behavior holds the load trigger at.
				Behavior: "currentReplicas",
			},
			Advanced: &advanced{HorizontalPodAutoscalerConfig: &hpaConfig{Behavior: &behavior{
				ScaleUp:   &scalingRules{StabilizationWindowSeconds: int(a.ScaleUpStabilization / time.Second)},
				ScaleDown: &scalingRules{StabilizationWindowSeconds: int(a.ScaleDownStabilization / time.Second)},
			}}},
			Triggers: triggers,
		},
	}
	if err := check(obj); err != nil {
		return scaledObject{}, err
	}
	if err := checkQueries(obj, allowedSeries(slos)); err != nil {
		return scaledObject{}, err
	}
	return obj, nil
}

// fallbackReplicas is the spec's value, else the capacity plan, else max:
// when KEDA cannot see Prometheus, serving the SLO matters more than saving
// replicas. It is kept within min and max.
func fallbackReplicas(a *model.Autoscaling, plan capacity.Result, planned bool) int {
	n := a.MaxReplicas
	switch {
	case a.FallbackReplicas > 0:
		n = a.FallbackReplicas
	case planned:
		n = plan.Replicas
	}
	return min(max(n, a.MinReplicas), a.MaxReplicas)
}

// maxBurnStep caps the burn trigger's value: the burn rate lags its window
// by minutes, so an uncapped value would multiply the fleet again on every
// sync until the window has caught up with the replicas already added.
const maxBurnStep = 2

// triggersOf builds the Prometheus triggers in a fixed order: slow share
// per TTFT SLO, queue depth per distinct engine queue, burn rate per SLO.
//
// Every query reads 0 without traffic and returns nothing only when its
// series vanished; ignoreNullValues is false so that KEDA reports an error
// then instead of reading 0 and scaling in: the HPA skips any scale-in
// while a metric fails, KEDA's fallback holds the current replica count,
// and the rules' no-data alert names the cause. So at minReplicas 0 too:
// the fleet scales to zero on queries reading 0 (an explicit signal of no
// load), never because its series vanished (a broken scrape or relabel
// would take a serving fleet to zero).
func triggersOf(u unit, plan capacity.Result, planned bool) ([]trigger, error) {
	a, slos := u.a, u.slos
	headroom := a.Headroom
	if headroom.Cmp(model.NewDecimal(0, 1)) <= 0 || headroom.Cmp(model.NewDecimal(1, 1)) > 0 {
		return nil, fmt.Errorf("headroom %s is not within (0, 1]", headroom)
	}
	const ignoreNull = "false"
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
				"ignoreNullValues":    ignoreNull,
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
			return nil, fmt.Errorf("slo %s: the TTFT trigger needs the histogram and threshold", slo.Name)
		}
		allowed := slo.ErrorBudget().Mul(headroom)
		share, ok := slowShare(slo, u.group, gate(slo, allowed, triggerWindow(slo)))
		if !ok {
			// The spec refuses a threshold between buckets.
			return nil, fmt.Errorf("slo %s: the threshold %ss is not a bucket of %s", slo.Name, inf.Threshold, inf.Histogram)
		}
		// The share over the share allowed, against 1: KEDA hands values to
		// the HPA in thousandths, which would round a share of 0.0008 to
		// nothing. Value, not AverageValue: a share does not divide by
		// replicas; the HPA scales by observed/target. The count sits on
		// the threshold's bucket boundary, so the value holds still while
		// the SLO holds and moves only as requests cross the threshold,
		// which is what queueing (and so replicas) changes.
		query := fmt.Sprintf("clamp_max(%s / %s, %s)", share, allowed, strconv.FormatFloat(MaxStep, 'f', -1, 64))
		out = append(out, base("ttft-"+slo.Name, query, "Value", model.NewDecimal(1, 1), model.NewDecimal(0, 1)))
	}

	seenQueue := map[string]bool{}
	for _, slo := range slos {
		inf := slo.Inference
		if inf == nil || inf.Signals.QueueDepth == "" {
			continue
		}
		sel, err := QueueSelector(slo, u.group)
		if err != nil {
			return nil, fmt.Errorf("slo %s: queue-depth gauge: %w", slo.Name, err)
		}
		if seenQueue[sel] {
			continue
		}
		seenQueue[sel] = true
		target := a.QueuePerReplica
		if target.IsZero() {
			if !planned {
				// Nothing to aim at; the spec warns of it.
				continue
			}
			target = plan.QueuePerReplica
		}
		if target.Cmp(model.NewDecimal(0, 1)) < 0 {
			return nil, fmt.Errorf("queuePerReplica %s is negative", target)
		}
		// Value over the serving replicas' mean, bounded to MaxStep times
		// the target: the summed queue over a target (AverageValue) asks
		// for a replica per target's worth of waiting requests, and a
		// backlog of hundreds, which a few more replicas drain in seconds,
		// would ask for hundreds.
		name := "queue"
		if len(seenQueue) > 1 {
			name = "queue-" + slo.Name
		}
		step := target.Mul(model.DecimalFromFloat(MaxStep))
		out = append(out, base(name, fmt.Sprintf("clamp_max(avg(%s), %s)", sel, step), "Value", target, model.NewDecimal(0, 1)))
	}

	if planned {
		t, ok, err := loadTrigger(u, plan, base)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t)
		}
	}

	if a.BurnRateTrigger {
		for _, slo := range slos {
			if !slo.ScaleOnBurn {
				continue
			}
			// A burn rate of 1 spends the budget exactly over the window:
			// above it the HPA adds replicas in proportion, at most
			// doubling per sync, and only on traffic past the gate.
			w := slo.BaseWindow()
			g := groupMatchers(u.group)
			query := fmt.Sprintf("clamp_max(sum(%s) / clamp_min(sum(%s), %s) / %s, %d)",
				withMatchers(model.Selector(model.BadEventsRate, slo, w), g),
				withMatchers(model.Selector(model.EventsRate, slo, w), g),
				gate(slo, slo.ErrorBudget(), w), slo.ErrorBudget(), maxBurnStep)
			out = append(out, base("burn-"+slo.Name, query, "Value", model.NewDecimal(1, 1), model.NewDecimal(1, 1)))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("autoscaling has no trigger: it needs a ttft SLO, an engine queue-depth series, or burnRateTrigger with an SLO that scales on burn (interactive latency SLOs do by default; others with scaleOnBurn: true)")
	}
	return out, nil
}

// triggerWindow is the TTFT trigger's rate window (and the window the load
// trigger's last two scrapes are looked for in): four scrapes, at least two
// minutes, so the TTFT trigger stops reading a slow start soon after the replicas
// it asked for serve (a longer window keeps asking for minutes after).
func triggerWindow(slo model.SLO) time.Duration {
	return max(4*slo.Scrape(), 2*time.Minute)
}

// slowShare is the query of the share of requests slower than the SLO's
// threshold over the rate window, counted over at least gate requests per
// second (below that traffic the share is scaled down, so a few slow
// requests at night do not read as a fleet-wide problem). It reads 0
// without traffic and nothing when the histogram vanished. false: the
// threshold is not a bucket, so no exact count exists.
func slowShare(slo model.SLO, group model.ScaleGroup, gate model.Decimal) (string, bool) {
	inf := slo.Inference
	w := model.FormatDuration(triggerWindow(slo))
	ms := joinMatchers(inf.Selector, groupMatchers(group))
	if inf.Native {
		// Native histograms count exactly at a schema boundary (spec
		// warns otherwise); histogram_fraction of an empty histogram is
		// NaN, which reads 0 here as long as the histogram exists.
		h := fmt.Sprintf("sum(rate(%s[%s]))", selector(inf.Histogram, ms), w)
		return fmt.Sprintf("((histogram_count(%[1]s) * histogram_fraction(%[2]s, +Inf, %[1]s) / clamp_min(histogram_count(%[1]s), %[3]s) >= 0) or on () (0 * histogram_count(%[1]s)))",
			h, inf.NativeThreshold(), gate), true
	}
	le, ok := thresholdBucket(inf)
	if !ok {
		return "", false
	}
	bucket := func(le string) string {
		return fmt.Sprintf("sum(rate(%s[%s]))", selector(inf.Histogram+"_bucket", joinMatchers(ms, "le="+strconv.Quote(le))), w)
	}
	total := bucket("+Inf")
	return fmt.Sprintf("((%s - %s) / clamp_min(%s, %s))", total, bucket(le), total, gate), true
}

// thresholdBucket is the le of the bucket that ends at the threshold, as
// the rules count it; a histogram whose buckets nobody declared is taken
// to have one there, as its SLI's good query does.
func thresholdBucket(inf *model.Inference) (string, bool) {
	if len(inf.Buckets) == 0 {
		return labels.FormatOpenMetricsFloat(inf.NativeThreshold().Float()), true
	}
	h := engine.Histogram{Unit: inf.Unit, Buckets: inf.Buckets}
	b, ok := h.Bucket(inf.Threshold.Float())
	return labels.FormatOpenMetricsFloat(b), ok
}

// gate is the traffic, in events per second, under which a share is read
// over the gate instead of the traffic: the spec's minEventsPerSecond, or
// else the traffic at which one bad event in the window stays within the
// allowed share (1 / (window × share)), rounded up to two digits.
func gate(slo model.SLO, allowed model.Decimal, window time.Duration) model.Decimal {
	if g := slo.Alerting.MinEventsPerSecond; !g.IsZero() {
		return g
	}
	return ceil2(1 / (window.Seconds() * allowed.Float()))
}

// ceil2 rounds x > 0 up to two significant digits.
func ceil2(x float64) model.Decimal {
	e := int(math.Floor(math.Log10(x))) - 1 // 10^e is the second digit's place
	p := math.Pow(10, float64(e))
	d, err := model.ParseDecimal(strconv.FormatFloat(math.Ceil(x/p-1e-9)*p, 'f', max(0, -e), 64))
	if err != nil {
		return model.NewDecimal(1, 1)
	}
	return d
}

// QueueSelector is the engine's queue-depth gauge of an SLO's series (of
// one group of a grouped SLO); "" when the engine exports none.
func QueueSelector(slo model.SLO, g model.ScaleGroup) (string, error) {
	inf := slo.Inference
	if inf == nil || inf.Signals.QueueDepth == "" {
		return "", nil
	}
	return query.Scoped(inf.Signals.QueueDepth, joinMatchers(inf.Selector, groupMatchers(g)))
}

// groupMatchers selects one group's series.
func groupMatchers(g model.ScaleGroup) string {
	parts := make([]string, len(g))
	for i, l := range g {
		parts[i] = l.Name + "=" + strconv.Quote(l.Value)
	}
	return strings.Join(parts, ",")
}

func joinMatchers(ms ...string) string {
	var parts []string
	for _, m := range ms {
		if m != "" {
			parts = append(parts, m)
		}
	}
	return strings.Join(parts, ",")
}

// withMatchers adds matchers to a recording's selector name{...}.
func withMatchers(sel, ms string) string {
	if ms == "" {
		return sel
	}
	return strings.TrimSuffix(sel, "}") + "," + ms + "}"
}

func selector(name, matchers string) string {
	return query.SeriesSelector(name, matchers)
}

// allowedSeries are the only metric names triggers may read: the engine's
// series named in the model and the recordings of the rules backend.
func allowedSeries(slos []model.SLO) map[string]bool {
	ok := map[string]bool{}
	for _, n := range []string{model.EventsRate, model.BadEventsRate, model.ErrorRatio, model.BudgetRemaining, model.Objective, model.Info} {
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
