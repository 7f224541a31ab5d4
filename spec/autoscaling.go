package spec

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/capacity"
	"github.com/inferslo/inferslo/compiler/model"
)

// Values of the autoscaling section end up in a KEDA ScaledObject and the
// HPA KEDA makes from it; these checks hold them to the CRD's ranges and
// formats so `kubectl apply` never refuses what validate passed.

var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// scaleTargetKinds are the kinds whose API group the KEDA backend knows.
var scaleTargetKinds = []string{"Deployment", "StatefulSet", "LeaderWorkerSet", "Rollout"}

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
	if n := out.TargetName; n != "" && (len(n) > 253 || !dnsSubdomain.MatchString(n)) {
		errorf("target.name", "%q is not a Kubernetes object name (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.')", n)
	}
	if !contains(scaleTargetKinds, out.TargetKind) {
		errorf("target.kind", "%q is not a scale target kind inferslo knows; valid: %s", out.TargetKind, fmtList(scaleTargetKinds))
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

// planProblems checks each service's capacity plan where the spec gives
// its facts: a plan that cannot be made is an error, a queue target the
// plan had to raise is a warning, located at the autoscaling section.
func planProblems(set model.Set, objects map[string]object[v1.SLO]) Problems {
	var ps Problems
	path := "metadata.annotations." + AnnotationAutoscaling
	for _, service := range set.PerService() {
		var slos []model.SLO
		for _, s := range service.SLOs {
			if s.Autoscaling != nil {
				slos = append(slos, s)
			}
		}
		if len(slos) == 0 {
			continue
		}
		o := objects[slos[0].Name]
		plan, ok, err := capacity.ForService(slos)
		if err != nil {
			ps = append(ps, o.errorf(path+".capacity", "%v", err))
			continue
		}
		if !ok {
			continue
		}
		o = objects[plan.SLO]
		a := slos[0].Autoscaling
		if plan.QueueFloored() && a.QueuePerReplica.IsZero() {
			ps = append(ps, o.warnf(path+".capacity", "the capacity plan implies %s waiting requests per replica (utilisation %s with %s slots); the KEDA queue target is raised to %s so the autoscaler cannot run away on a single waiting request (set queuePerReplica to choose another)",
				plan.QueueModel, plan.Ceiling.Percent(), plan.Slots, plan.QueuePerReplica))
		}
	}
	return ps
}

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
