package lint

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// scaledObject reads a KEDA ScaledObject's Prometheus triggers and applies
// the checks KEDA's Prometheus scaler makes when it starts: threshold and
// activationThreshold must be numbers, and the query must return one
// series (the scaler fails on more).
func (f *File) scaledObject(p *pass, n *yaml.Node) {
	for _, t := range items(mapValue(mapValue(n, "spec"), "triggers")) {
		if scalarAt(t, "type") != "prometheus" {
			continue
		}
		meta := mapValue(t, "metadata")
		for _, key := range []string{"threshold", "activationThreshold"} {
			v := mapValue(meta, key)
			if v == nil {
				continue
			}
			if x, err := strconv.ParseFloat(strings.TrimSpace(v.Value), 64); err != nil || key == "threshold" && x <= 0 {
				p.with(checkKEDAThreshold).atYAML(f, v, "%s %q is not a number%s: KEDA's Prometheus scaler refuses the trigger", key, v.Value, map[bool]string{true: " above zero"}[key == "threshold"])
			}
		}
		if mapValue(meta, "threshold") == nil {
			p.with(checkKEDAThreshold).atYAML(f, meta, "the trigger has no threshold: KEDA's Prometheus scaler refuses it")
		}
		qn := mapValue(meta, "query")
		if qn == nil {
			continue
		}
		q := f.query(p, qn, nil, false)
		if q.Expr == nil {
			continue
		}
		flow := labelFlow(q.Expr)
		switch {
		case !flow.open && len(flow.has) > 0:
			p.with(checkKEDASeveral).atYAML(f, qn, "the query keeps the labels %s (%s), so it returns one series per value; KEDA's Prometheus scaler fails on more than one: aggregate them away (sum, max)",
				strings.Join(slices.Sorted(maps.Keys(flow.has)), ", "), describe(q, flow.closer))
		case flow.open:
			p.with(checkKEDAMaySeveral).atYAML(f, qn, "the query is not aggregated, so it may return several series; KEDA's Prometheus scaler fails on more than one: wrap it in sum() or max()")
		}
	}
}

var checkKEDAThreshold = Check{
	ID: "keda/threshold", Severity: Error,
	Summary: "A ScaledObject's Prometheus trigger has a threshold (or activationThreshold) that is not a number, which KEDA refuses.",
}

var checkKEDASeveral = Check{
	ID: "keda/several-series", Severity: Error,
	Summary: "A ScaledObject's Prometheus query keeps grouping labels, so it returns several series and KEDA's scaler fails.",
}

var checkKEDAMaySeveral = Check{
	ID: "keda/may-return-several", Severity: Warning,
	Summary: "A ScaledObject's Prometheus query is not aggregated, so it may return several series, on which KEDA's scaler fails.",
}

// analysisTemplate reads an Argo Rollouts AnalysisTemplate's Prometheus
// queries. A query holding Argo's {{args.name}} is a template until Argo
// fills it in, and is left alone.
func (f *File) analysisTemplate(p *pass, n *yaml.Node) {
	for _, m := range items(mapValue(mapValue(n, "spec"), "metrics")) {
		qn := mapValue(mapValue(mapValue(m, "provider"), "prometheus"), "query")
		if qn != nil && !strings.Contains(qn.Value, "{{") {
			f.query(p, qn, nil, false)
		}
	}
}
