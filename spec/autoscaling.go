package spec

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
	"github.com/inferslo/inferslo/compiler/query"
)

// Values of the autoscaling section end up in a KEDA ScaledObject and the
// HPA KEDA makes from it; these checks hold them to the CRD's ranges and
// formats so `kubectl apply` never refuses what validate passed.

var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// scaleTargetKinds are the kinds whose API group the KEDA backend knows.
var scaleTargetKinds = []string{"Deployment", "StatefulSet", "LeaderWorkerSet", "Rollout"}

// A target's API version (group/version, or a core version) and kind, as
// Kubernetes spells them.
var (
	apiVersionPattern = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?v[0-9]+((alpha|beta)[0-9]+)?$`)
	kindPattern       = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,62}$`)
)

func checkAutoscaling(o object[v1.SLO], ps *Problems, path string, a ShorthandAutoscaling, out *model.Autoscaling) {
	errorf := func(field, format string, args ...any) {
		*ps = append(*ps, o.errorf(path+"."+field, format, args...))
	}
	for _, r := range []struct {
		field string
		v     *int
	}{{"minReplicas", a.MinReplicas}, {"maxReplicas", &a.MaxReplicas}, {"fallbackReplicas", a.FallbackReplicas}} {
		if r.v != nil && (*r.v < 0 || *r.v > math.MaxInt32) {
			errorf(r.field, "%d is outside the replica counts a ScaledObject takes, 0 to %d", *r.v, math.MaxInt32)
		}
	}
	if out.MinReplicas == 0 && out.MaxReplicas >= 1 {
		*ps = append(*ps, o.warnf(path+".minReplicas", "minReplicas 0 lets KEDA scale the engine to zero when idle: the first request then waits for a replica to start and load its model, and TTFT burns; set minReplicas: 1 unless cold starts are acceptable"))
	}
	if f := a.FallbackReplicas; f != nil && *f > out.MaxReplicas && out.MaxReplicas >= 1 {
		errorf("fallbackReplicas", "%d is above maxReplicas %d", *f, out.MaxReplicas)
	}
	if f := a.FallbackReplicas; f != nil && *f < out.MinReplicas {
		errorf("fallbackReplicas", "%d is below minReplicas %d: the count KEDA holds while Prometheus cannot answer must not shrink the fleet below its floor", *f, out.MinReplicas)
	}
	// A name with {{label}} placeholders is checked once per group, filled.
	if n := out.TargetName; n != "" && !strings.Contains(n, "{{") && !validTargetName(n) {
		errorf("target.name", "%q is not a Kubernetes object name (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.')", n)
	}
	switch v := out.TargetAPIVersion; {
	case v != "" && !apiVersionPattern.MatchString(v):
		errorf("target.apiVersion", "%q is not a Kubernetes API version; valid: group/version such as serving.kserve.io/v1beta1, or apps/v1", v)
	case v != "" && !kindPattern.MatchString(out.TargetKind):
		errorf("target.kind", "%q is not a Kubernetes kind (an upper-case letter, then letters and digits)", out.TargetKind)
	case v == "" && !slices.Contains(scaleTargetKinds, out.TargetKind):
		errorf("target.kind", "%q is not a scale target kind inferslo knows; valid: %s, or any kind with a scale subresource named with its target.apiVersion (group/version)", out.TargetKind, fmtList(scaleTargetKinds))
	}
	if ns := out.Namespace; ns != "" && !isDNSLabel(ns) {
		errorf("namespace", "%q is not a namespace name (a DNS label)", ns)
	}
	if r := out.AuthenticationRef; r != "" && (len(r) > 253 || !dnsSubdomain.MatchString(r)) {
		errorf("authenticationRef", "%q is not a TriggerAuthentication name (a DNS-1123 subdomain)", r)
	}
	if u := out.ServerAddress; u != "" {
		if msg := httpURLProblem(u, "http://prometheus-operated.monitoring:9090"); msg != "" {
			errorf("prometheus", "%s", msg)
		}
	}
	if q := a.QueuePerReplica; q != "" {
		if d, err := model.ParseDecimal(q); err == nil && d.Cmp(capacity.MinQueuePerReplica) < 0 {
			errorf("queuePerReplica", "%s is under one waiting request per replica: the autoscaler would add a replica for a fraction of a waiting request and run away; use at least %s", q, capacity.MinQueuePerReplica)
		}
	}
	if h := a.Headroom; h != "" {
		if d, err := model.ParseDecimal(h); err == nil && (d.Cmp(model.NewDecimal(0, 1)) <= 0 || d.Cmp(model.NewDecimal(1, 1)) > 0) {
			errorf("headroom", "%s is not within (0, 1]: the share of the error budget the TTFT trigger lets slow requests take before it scales out, such as 0.8", h)
		}
	}
}

func validTargetName(n string) bool { return len(n) <= 253 && dnsSubdomain.MatchString(n) }

// placeholder is a {{label}} in a scale target's name.
var placeholder = regexp.MustCompile(`\{\{([^{}]*)\}\}`)

// scaleGroups reads the groups a grouped SLO autoscales: with no scrape at
// compile time they must be declared, one map of the groupBy labels each,
// and the target's name must tell the groups' targets apart.
func scaleGroups(o object[v1.SLO], ps *Problems, path string, a ShorthandAutoscaling, groupBy []string) []model.ScaleGroup {
	errorf := func(field, format string, args ...any) {
		*ps = append(*ps, o.errorf(path+field, format, args...))
	}
	name := a.Target.Name
	used := map[string]bool{}
	for _, m := range placeholder.FindAllStringSubmatch(name, -1) {
		if !slices.Contains(groupBy, m[1]) {
			errorf(".target.name", "%s names no groupBy label; valid: %s", m[0], fmtList(placeholderList(groupBy)))
			return nil
		}
		used[m[1]] = true
	}
	if strings.ContainsAny(placeholder.ReplaceAllString(name, ""), "{}") {
		errorf(".target.name", "%q has a brace outside a {{label}} placeholder", name)
		return nil
	}
	switch {
	case len(groupBy) == 0 && len(a.Groups) > 0:
		errorf(".groups", "groups need a grouped SLO (groupBy: [model_name]); without groupBy there is one group")
		return nil
	case len(groupBy) == 0 && len(used) > 0:
		errorf(".target.name", "%q has placeholders, but the SLO is not grouped; name one target", name)
		return nil
	case len(groupBy) > 0 && len(a.Groups) == 0:
		errorf("", "the SLO is grouped by %s, and one ScaledObject would scale one target on every group's traffic; list the groups to autoscale under groups (such as [{%s: ...}]) and name the target per group (such as %s)",
			strings.Join(groupBy, ", "), groupBy[0], "vllm-{{"+groupBy[0]+"}}")
		return nil
	case len(a.Groups) > 1 && len(used) == 0:
		errorf(".target.name", "%q names no {{label}}, so every group would scale the same target; name it per group, such as %s-{{%s}}", name, name, groupBy[0])
		return nil
	}
	var out []model.ScaleGroup
	targets := map[string]int{}
	for i, g := range a.Groups {
		gp := fmt.Sprintf(".groups[%d]", i)
		var group model.ScaleGroup
		ok := true
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if !slices.Contains(groupBy, k) {
				errorf(gp+"."+k, "%q is not a groupBy label; valid: %s", k, fmtList(groupBy))
				ok = false
			}
		}
		for _, k := range groupBy {
			v, has := g[k]
			if !has {
				errorf(gp, "gives no %s; every group names each groupBy label (%s)", k, strings.Join(groupBy, ", "))
				ok = false
				continue
			}
			n := len(*ps)
			checkLabelValue(o, path+gp+"."+k, v, ps)
			ok = ok && len(*ps) == n
			group = append(group, model.LabelValue{Name: k, Value: v})
		}
		if !ok {
			continue
		}
		target := (&model.Autoscaling{TargetName: name}).ScaleTargetName(group)
		if !validTargetName(target) {
			errorf(gp, "makes the target name %q, which is not a Kubernetes object name (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.')", target)
			continue
		}
		if j, dup := targets[target]; dup {
			errorf(gp, "makes the target name %q, as groups[%d] does; each group needs its own target", target, j)
			continue
		}
		targets[target] = i
		out = append(out, group)
	}
	return out
}

func placeholderList(groupBy []string) []string {
	out := make([]string, len(groupBy))
	for i, g := range groupBy {
		out[i] = "{{" + g + "}}"
	}
	return out
}

// planProblems checks each scale target across every spec given, keyed by
// namespace, kind and name: SLOs scaling one target must belong to one
// service (each service writes its own ScaledObject, and two on one target
// fight) and agree on its settings; the target needs something to scale
// on; a capacity plan that cannot be made is an error, a queue target the
// plan had to raise a warning, located at the autoscaling section.
func planProblems(set model.Set, objects map[string]object[v1.SLO]) Problems {
	var ps Problems
	path := "metadata.annotations." + AnnotationAutoscaling
	var order []string
	byTarget := map[string][]model.SLO{}
	for _, s := range set.SLOs {
		if a := s.Autoscaling; a != nil {
			k := a.Namespace + "/" + a.TargetKind + "/" + a.TargetName
			if _, ok := byTarget[k]; !ok {
				order = append(order, k)
			}
			byTarget[k] = append(byTarget[k], s)
		}
	}
	for _, k := range order {
		ps = append(ps, targetProblems(byTarget[k], objects, path)...)
	}
	return ps
}

// namespaceText names a target's namespace; a ScaledObject without one is
// created in the namespace it is applied to.
func namespaceText(ns string) string {
	if ns == "" {
		return "without a namespace (in the one the ScaledObjects are applied to)"
	}
	return fmt.Sprintf("in namespace %q", ns)
}

func targetProblems(slos []model.SLO, objects map[string]object[v1.SLO], path string) Problems {
	var ps Problems
	first := slos[0]
	a := first.Autoscaling
	// One problem per service that also scales the target, not one per SLO
	// of it: the fault is the service's autoscaling section.
	reported := map[string]bool{}
	for _, s := range slos[1:] {
		switch {
		case s.Service.Name != first.Service.Name:
			if reported[s.Service.Name] {
				continue
			}
			reported[s.Service.Name] = true
			ps = append(ps, objects[s.Name].errorf(path+".target", "SLO %s of service %s scales %s %s %s, which SLO %s of service %s (%s) scales too: each service writes its own ScaledObject, and two ScaledObjects on one target fight over its replicas; scale it from one service, or give each service its own target",
				s.Name, s.Service.Name, a.TargetKind, a.TargetName, namespaceText(a.Namespace), first.Name, first.Service.Name, objects[first.Name].locate(path+".target")))
		case a.Key() != s.Autoscaling.Key() || !slices.Equal(first.GroupBy, s.GroupBy):
			ps = append(ps, objects[s.Name].errorf(path, "SLO %s scales %s %s as SLO %s (%s) does, with other settings or groups; SLOs scaling one target share one autoscaling section (give this spec its own target to scale it apart)",
				s.Name, a.TargetKind, a.TargetName, first.Name, location(objects[first.Name].d)))
		}
	}
	if len(ps) > 0 {
		return ps
	}
	o := objects[first.Name]
	plan, planned, err := capacity.ForService(slos)
	if err != nil {
		return append(ps, o.errorf(path+".capacity", "%v", err))
	}
	if !hasTrigger(slos, a, planned) {
		return append(ps, o.errorf(path, "%s %s has nothing to scale on: autoscaling needs a ttft objective, an engine queue-depth gauge with queuePerReplica or capacity facts (capacity: peakRPS, meanServiceTime), or burnRateTrigger with an SLO that scales on burn (scaleOnBurn: true)",
			a.TargetKind, a.TargetName))
	}
	if !planned {
		if a.QueuePerReplica.IsZero() && slices.ContainsFunc(slos, readsQueue) {
			ps = append(ps, o.warnf(path, "%s %s gets no queue-depth trigger, because neither queuePerReplica nor capacity facts (capacity: peakRPS, meanServiceTime) are given; it scales on latency alone",
				a.TargetKind, a.TargetName))
		}
		return ps
	}
	o = objects[plan.SLO]
	if a.MaxReplicas < plan.Replicas {
		ps = append(ps, o.warnf(path+".maxReplicas", "maxReplicas %d is below the %d replicas the capacity plan needs for %s requests/s at peak on %s %s (run `inferslo plan` for the arithmetic)",
			a.MaxReplicas, plan.Replicas, plan.PeakRPS, a.TargetKind, a.TargetName))
	}
	if plan.QueueFloored() && a.QueuePerReplica.IsZero() {
		ps = append(ps, o.warnf(path+".capacity", "the capacity plan implies %s waiting requests per replica (utilisation %s at peak on %d replicas of %s slots); the KEDA queue target is raised to %s so the autoscaler cannot run away on a single waiting request (set queuePerReplica to choose another)",
			plan.QueueModel, plan.Utilisation.Percent(), plan.Replicas, plan.Slots, plan.QueuePerReplica))
	}
	return ps
}

// hasTrigger says whether the KEDA backend finds a trigger for a target:
// a TTFT SLO, an engine queue gauge with a target per replica, or the
// burn-rate trigger with an SLO that scales on burn.
func hasTrigger(slos []model.SLO, a *model.Autoscaling, planned bool) bool {
	return slices.ContainsFunc(slos, func(s model.SLO) bool {
		return s.Inference != nil && s.Inference.Role == "ttft" ||
			readsQueue(s) && (!a.QueuePerReplica.IsZero() || planned) ||
			a.BurnRateTrigger && s.ScaleOnBurn
	})
}

// readsQueue tells whether an SLO's engine exports the queue gauge a
// queue-depth trigger reads.
func readsQueue(s model.SLO) bool { return s.Inference != nil && s.Inference.Signals.QueueDepth != "" }

// httpURLProblem says why s is not an http(s) URL safe to write into an
// artifact, or "".
func httpURLProblem(s, example string) string {
	if msg := textProblem(s, oneLine); msg != "" {
		return msg
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(s, " \"'<>`\\") {
		return fmt.Sprintf("%q is not an http(s) URL such as %s", s, example)
	}
	return ""
}

// autoscaling reads the KEDA section from its annotation.
func autoscaling(o object[v1.SLO], ps *Problems, groupBy []string) *model.Autoscaling {
	if extensionProblem(o, AnnotationAutoscaling, ps) || o.ext.Autoscaling == nil {
		return nil
	}
	path := "metadata.annotations." + AnnotationAutoscaling
	a := *o.ext.Autoscaling
	out := &model.Autoscaling{
		TargetKind:             a.Target.Kind,
		TargetAPIVersion:       a.Target.APIVersion,
		TargetName:             a.Target.Name,
		Namespace:              a.Namespace,
		MinReplicas:            1,
		MaxReplicas:            a.MaxReplicas,
		ServerAddress:          a.Prometheus,
		AuthenticationRef:      a.AuthenticationRef,
		Headroom:               model.NewDecimal(8, 10),
		BurnRateTrigger:        a.BurnRateTrigger,
		ScaleUpStabilization:   30 * time.Second,
		ScaleDownStabilization: 300 * time.Second,
	}
	out.TargetKind = cmp.Or(out.TargetKind, "Deployment")
	if out.TargetName == "" {
		*ps = append(*ps, o.errorf(path+".target.name", "required: the Deployment (or other scale target) to scale"))
	}
	if out.ServerAddress == "" {
		*ps = append(*ps, o.errorf(path+".prometheus", "required: the Prometheus URL KEDA queries, such as http://prometheus.monitoring:9090"))
	}
	if a.MinReplicas != nil {
		out.MinReplicas = *a.MinReplicas
	}
	if out.MaxReplicas < 1 || out.MaxReplicas < out.MinReplicas {
		*ps = append(*ps, o.errorf(path+".maxReplicas", "must be at least 1 and at least minReplicas (%d)", out.MinReplicas))
	}
	checkAutoscaling(o, ps, path, a, out)
	out.Groups = scaleGroups(o, ps, path, a, groupBy)
	if a.FallbackReplicas != nil {
		out.FallbackReplicas = *a.FallbackReplicas
	}
	dec2 := func(field, v string, dst *model.Decimal) {
		if v == "" {
			return
		}
		d, err := model.ParseDecimal(v)
		if err != nil {
			*ps = append(*ps, o.errorf(path+"."+field, "%q is not a number", v))
			return
		}
		*dst = d
	}
	dur := func(field, v string, dst *time.Duration) {
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			*ps = append(*ps, o.errorf(path+"."+field, "%q is not a duration such as 30s", v))
			return
		}
		*dst = d
	}
	dec2("headroom", a.Headroom, &out.Headroom)
	dec2("queuePerReplica", a.QueuePerReplica, &out.QueuePerReplica)
	dur("scaleUpStabilization", a.ScaleUpStabilization, &out.ScaleUpStabilization)
	dur("scaleDownStabilization", a.ScaleDownStabilization, &out.ScaleDownStabilization)
	if c := a.Capacity; c != nil {
		dec2("capacity.peakRPS", c.PeakRPS, &out.Capacity.PeakRPS)
		dec2("capacity.replicaConcurrency", c.ReplicaConcurrency, &out.Capacity.ReplicaConcurrency)
		dur("capacity.meanServiceTime", c.MeanServiceTime, &out.Capacity.MeanServiceTime)
	}
	return out
}

// sharedSeriesProblems warns where two scale targets read the same series:
// ungrouped SLOs of one engine whose selectors no label tells apart (a
// canary of the same model in another namespace, selected by model name
// alone). Each target would scale on the other's traffic too.
func sharedSeriesProblems(set model.Set, objects map[string]object[v1.SLO]) Problems {
	var ps Problems
	type reader struct {
		slo      model.SLO
		matchers []*labels.Matcher
	}
	var readers []reader
	seen := map[string]bool{}
	for _, s := range set.SLOs {
		a := s.Autoscaling
		if a == nil || s.Inference == nil || len(s.GroupBy) > 0 {
			continue
		}
		target := a.TargetKind + "/" + a.Namespace + "/" + a.TargetName
		if seen[target] {
			continue // SLOs of one target (their agreement is checked apart)
		}
		ms, err := query.NewParser().ParseMetricSelector("{" + s.Inference.Selector + "}")
		if err != nil && s.Inference.Selector != "" {
			continue // reported where the selector is read
		}
		seen[target] = true
		for _, r := range readers {
			if r.slo.Inference.Engine != s.Inference.Engine || !overlap(r.matchers, ms) {
				continue
			}
			ra := r.slo.Autoscaling
			ps = append(ps, objects[s.Name].warnf("metadata.annotations."+AnnotationAutoscaling+".target",
				"%s %s/%s reads the same %s series as %s %s/%s (SLO %s, %s): each would scale on the other's traffic too; add a label that tells them apart (namespace, pod or deployment) to the selector of each",
				a.TargetKind, a.Namespace, a.TargetName, s.Inference.Engine, ra.TargetKind, ra.Namespace, ra.TargetName, r.slo.Name, location(objects[r.slo.Name].d)))
			break
		}
		readers = append(readers, reader{s, ms})
	}
	return ps
}

// overlap tells whether two selectors may match one series: no label has
// a matcher in one that an equality matcher's value in the other fails.
func overlap(a, b []*labels.Matcher) bool {
	apart := func(x, y []*labels.Matcher) bool {
		for _, m := range x {
			for _, e := range y {
				if e.Name == m.Name && e.Type == labels.MatchEqual && !m.Matches(e.Value) {
					return true
				}
			}
		}
		return false
	}
	return !apart(a, b) && !apart(b, a)
}
