package spec

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/OpenSLO/go-sdk/pkg/openslo"
	"github.com/OpenSLO/go-sdk/pkg/openslo/v1alpha"
	"github.com/OpenSLO/go-sdk/pkg/openslo/v2alpha"
	"github.com/prometheus/prometheus/promql/parser"
)

// decodeOlder reads an openslo/v1alpha or openslo.com/v2alpha object as
// the SDK decodes and validates it, and converts it to v1 objects (a
// v1alpha SLO gives one SLO per objective, as each objective has its own
// ratio). The conversion is reported as a warning on the apiVersion, and
// problems of the converted objects point at the fields they came from.
func decodeOlder(d *doc) ([]openslo.Object, []func(string) string, Problems) {
	obj, ps := decodeSDK(d)
	if obj == nil {
		return nil, nil, ps
	}
	// A v1alpha object is checked as the v1 object it becomes: v1alpha's
	// own rules require an objective value and a calendar for every
	// non-rolling window, which Sloth's v1alpha SLOs do not have.
	if obj.GetVersion() != openslo.VersionV1alpha {
		if err := obj.Validate(); err != nil {
			return nil, nil, validationProblems(d, err, samePath)
		}
	}
	var maps []map[string]any
	var paths []func(string) string
	switch o := obj.(type) {
	case v1alpha.Service:
		maps = []map[string]any{v1Object(o.Kind, map[string]any{"name": o.Metadata.Name, "displayName": o.Metadata.DisplayName}, map[string]any{"description": o.Spec.Description})}
		paths = []func(string) string{samePath}
	case v1alpha.SLO:
		var p Problem
		maps, p = v1alphaSLO(d, o)
		if p.Message != "" {
			return nil, nil, Problems{p}
		}
		for i := range maps {
			paths = append(paths, v1alphaPath(i))
		}
	default:
		m, p := v2alphaObject(d, obj)
		if p.Message != "" {
			return nil, nil, Problems{p}
		}
		maps, paths = []map[string]any{m}, []func(string) string{v2alphaPath}
	}
	var objs []openslo.Object
	for i, m := range maps {
		mapPath := paths[i]
		v1obj, err := sdkObject(m)
		if err != nil {
			return nil, nil, Problems{d.errorf("", "cannot convert %s %s to openslo/v1: %v", obj.GetVersion(), obj.GetKind(), err)}
		}
		if err := v1obj.Validate(); err != nil {
			return nil, nil, validationProblems(d, err, mapPath)
		}
		objs = append(objs, v1obj)
	}
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.GetName()
	}
	ps = append(ps, d.warnf("apiVersion", "%s %s converted to openslo/v1 (%s %s); write it as openslo/v1 (`inferslo export` prints it)",
		obj.GetVersion(), obj.GetKind(), obj.GetKind(), strings.Join(names, ", ")))
	return objs, paths, ps
}

func v1Object(kind openslo.Kind, metadata, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": string(openslo.VersionV1), "kind": string(kind), "metadata": metadata, "spec": spec}
}

// v1alphaUnits are the v1 duration units of v1alpha's window units.
var v1alphaUnits = map[v1alpha.SLOTimeWindowUnit]string{
	v1alpha.SLOTimeWindowUnitDay: "d", v1alpha.SLOTimeWindowUnitWeek: "w",
	v1alpha.SLOTimeWindowUnitMonth: "M", v1alpha.SLOTimeWindowUnitQuarter: "Q",
}

// v1alphaSLO converts a v1alpha SLO: one v1 SLO per objective, named
// name-i when there are several (as Sloth names them), with the objective's
// ratioMetrics or the SLO's thresholdMetric as the indicator. Sloth's
// {{.window}} template becomes the rate form (counter: true).
func v1alphaSLO(d *doc, o v1alpha.SLO) ([]map[string]any, Problem) {
	var windows []any
	for i, w := range o.Spec.TimeWindows {
		unit, ok := v1alphaUnits[w.Unit]
		if !ok {
			return nil, d.errorf(fmt.Sprintf("spec.timeWindows[%d].unit", i), "%s windows have no openslo/v1 equivalent; use Day, Week, Month or Quarter", w.Unit)
		}
		// A window without a calendar rolls, as Sloth reads it.
		tw := map[string]any{"duration": fmt.Sprintf("%d%s", w.Count, unit), "isRolling": w.IsRolling || w.Calendar == nil}
		if w.Calendar != nil {
			tw["calendar"] = map[string]any{"startTime": w.Calendar.StartTime, "timeZone": w.Calendar.TimeZone}
		}
		windows = append(windows, tw)
	}
	source := func(path string, m v1alpha.SLOMetricSourceSpec) (map[string]any, bool, Problem) {
		if m.QueryType != "" && !strings.EqualFold(m.QueryType, "promql") {
			return nil, false, d.errorf(path+".queryType", "%q queries are not PromQL; inferslo compiles PromQL (queryType: promql)", m.QueryType)
		}
		q, rated, err := RateForm(m.Query)
		if err != nil {
			return nil, false, d.errorf(path+".query", "%v", err)
		}
		typ := m.Source
		if strings.EqualFold(typ, "sloth") {
			typ = "Prometheus"
		}
		return map[string]any{"metricSource": map[string]any{"type": typ, "spec": map[string]any{"query": q}}}, rated, Problem{}
	}
	if len(o.Spec.Objectives) == 0 {
		return nil, d.errorf("spec.objectives", "required: at least one objective, such as {ratioMetrics: {good: …, total: …}, target: 0.99}")
	}
	var out []map[string]any
	for i, obj := range o.Spec.Objectives {
		path := fmt.Sprintf("spec.objectives[%d]", i)
		var sli map[string]any
		switch {
		case obj.RatioMetrics != nil:
			good, gr, p := source(path+".ratioMetrics.good", obj.RatioMetrics.Good)
			if p.Message != "" {
				return nil, p
			}
			total, tr, p := source(path+".ratioMetrics.total", obj.RatioMetrics.Total)
			if p.Message != "" {
				return nil, p
			}
			if gr != tr {
				return nil, d.errorf(path+".ratioMetrics", "good and total must both read {{.window}} rates or neither")
			}
			sli = map[string]any{"ratioMetric": map[string]any{"counter": obj.RatioMetrics.Incremental || gr, "good": good, "total": total}}
		case o.Spec.Indicator != nil:
			m, _, p := source("spec.indicator.thresholdMetric", o.Spec.Indicator.ThresholdMetric)
			if p.Message != "" {
				return nil, p
			}
			sli = map[string]any{"thresholdMetric": m}
		default:
			return nil, d.errorf(path, "an objective needs ratioMetrics, or the SLO an indicator")
		}
		name := o.Metadata.Name
		if len(o.Spec.Objectives) > 1 {
			name = fmt.Sprintf("%s-%d", name, i)
		}
		objective := map[string]any{"displayName": obj.DisplayName}
		for k, v := range map[string]*float64{"target": obj.BudgetTarget, "value": obj.Value, "timeSliceTarget": obj.TimeSliceTarget} {
			if v != nil {
				objective[k] = *v
			}
		}
		if obj.Operator != "" {
			objective["op"] = string(obj.Operator)
		}
		out = append(out, v1Object(openslo.KindSLO, map[string]any{"name": name, "displayName": o.Metadata.DisplayName}, map[string]any{
			"description":     o.Spec.Description,
			"service":         o.Spec.Service,
			"budgetingMethod": string(o.Spec.BudgetingMethod),
			"timeWindow":      windows,
			"indicator":       map[string]any{"metadata": map[string]any{"name": name}, "spec": sli},
			"objectives":      []any{objective},
		}))
	}
	return out, Problem{}
}

// v1alphaPath maps the v1 paths of the SLO converted from objective i
// onto the v1alpha document.
func v1alphaPath(i int) func(string) string {
	objective := fmt.Sprintf("spec.objectives[%d]", i)
	return func(p string) string {
		p = strings.Replace(p, "spec.objectives[0]", objective, 1)
		return strings.Replace(v1alphaField(p), "spec.indicator.spec.ratioMetric.", objective+".ratioMetrics.", 1)
	}
}

// v1alphaField maps v1 field names onto v1alpha's.
func v1alphaField(p string) string {
	return replaceFirst(p, [][2]string{
		{"spec.timeWindow", "spec.timeWindows"},
		{"spec.indicator.spec.thresholdMetric.", "spec.indicator.thresholdMetric."},
		{".metricSource.spec.query", ".query"},
		{".metricSource.type", ".source"},
		{"metadata.annotations", "metadata"},
	})
}

// replaceFirst replaces in p the first occurrence of each pair's first
// string by its second, in order.
func replaceFirst(p string, pairs [][2]string) string {
	for _, r := range pairs {
		p = strings.Replace(p, r[0], r[1], 1)
	}
	return p
}

// v2alphaObject converts a v2alpha object through its JSON form: the SLO's
// serviceRef, sli and sliRef become service, indicator and indicatorRef,
// and a metric's dataSourceRef and dataSourceSpec its metricSource. A
// composite SLO (objectives with SLIs of their own) has no v1 form.
func v2alphaObject(d *doc, obj openslo.Object) (map[string]any, Problem) {
	if slo, ok := obj.(v2alpha.SLO); ok && slo.IsComposite() {
		return nil, d.errorf("spec.objectives", "a composite SLO (objectives with SLIs of their own) has no openslo/v1 form; inferslo compiles one SLI per SLO")
	}
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, d.errorf("", "cannot convert: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, d.errorf("", "cannot convert: %v", err)
	}
	m["apiVersion"] = string(openslo.VersionV1)
	spec, _ := m["spec"].(map[string]any)
	if obj.GetKind() == openslo.KindSLO {
		rename(spec, "serviceRef", "service")
		rename(spec, "sli", "indicator")
		rename(spec, "sliRef", "indicatorRef")
		if ind, ok := spec["indicator"].(map[string]any); ok {
			spec = ind["spec"].(map[string]any)
		}
	}
	if obj.GetKind() == openslo.KindSLO || obj.GetKind() == openslo.KindSLI {
		metrics := []any{spec["thresholdMetric"]}
		if r, ok := spec["ratioMetric"].(map[string]any); ok {
			metrics = append(metrics, r["good"], r["bad"], r["total"], r["raw"])
		}
		for _, x := range metrics {
			if mm, ok := x.(map[string]any); ok {
				v2alphaMetric(mm)
			}
		}
	}
	return m, Problem{}
}

// v2alphaMetric rewrites a v2alpha metric spec into v1's metricSource.
func v2alphaMetric(m map[string]any) {
	src := map[string]any{"spec": m["spec"]}
	if ref, ok := m["dataSourceRef"]; ok {
		src["metricSourceRef"] = ref
	}
	if ds, ok := m["dataSourceSpec"].(map[string]any); ok {
		src["type"] = ds["type"]
	}
	clear(m)
	m["metricSource"] = src
}

func rename(m map[string]any, from, to string) {
	if v, ok := m[from]; ok {
		delete(m, from)
		m[to] = v
	}
}

// v2alphaPath maps a converted object's v1 paths onto the v2alpha document.
func v2alphaPath(p string) string {
	return replaceFirst(p, [][2]string{
		{"spec.service", "spec.serviceRef"},
		{"spec.indicatorRef", "spec.sliRef"},
		{"spec.indicator", "spec.sli"},
		{"metricSource.metricSourceRef", "dataSourceRef"},
		{"metricSource.type", "dataSourceSpec.type"},
		{"metricSource.spec", "spec"},
	})
}

// windowVar is Sloth's template variable for the window an SLI is read
// over; sentinelRange stands in for it so the query parses as PromQL.
const (
	windowVar     = "{{.window}}"
	sentinelRange = 7919 * time.Millisecond
	sentinelText  = "7919ms"
)

var templateVar = regexp.MustCompile(`{{[^}]*}}`)

// RateForm turns a query that reads counters' rates over Sloth's
// {{.window}} (sum(rate(x[{{.window}}]))) into the counter form inferslo
// rates itself (sum(x), with counter: true): exact, as inferslo reads the
// same counters over each window it needs. It reports whether it did; a
// query without the variable is returned as it is. A template variable it
// cannot replace exactly is an error naming it.
func RateForm(q string) (string, bool, error) {
	if !strings.Contains(q, "{{") {
		return q, false, nil
	}
	if v := templateVar.FindString(strings.ReplaceAll(q, windowVar, "")); v != "" {
		return "", false, fmt.Errorf("the template variable %s has no counterpart in inferslo; write the query with it filled in", v)
	}
	expr, err := query.NewParser().ParseExpr(strings.ReplaceAll(q, windowVar, sentinelText))
	if err != nil {
		return "", false, fmt.Errorf("invalid PromQL once %s is filled in: %w", windowVar, err)
	}
	var problem error
	expr = replaceRates(expr, &problem)
	if problem != nil {
		return "", false, problem
	}
	return expr.String(), true, nil
}

// replaceRates replaces rate(x[{{.window}}]) by x below e; any other use of
// the window is a problem.
func replaceRates(e parser.Expr, problem *error) parser.Expr {
	switch n := e.(type) {
	case *parser.Call:
		if ms, ok := n.Args[len(n.Args)-1].(*parser.MatrixSelector); ok && ms.Range == sentinelRange && len(n.Args) == 1 {
			if n.Func.Name != "rate" {
				*problem = fmt.Errorf("%s(…[%s]) has no exact counter form; only rate() over %s converts (to counter: true)", n.Func.Name, windowVar, windowVar)
				return e
			}
			vs := ms.VectorSelector.(*parser.VectorSelector)
			if vs.OriginalOffset != 0 || vs.Timestamp != nil || vs.StartOrEnd != 0 {
				*problem = fmt.Errorf("rate() over %s with offset or @ reads another time than the window; drop it", windowVar)
			}
			return vs
		}
		for i, a := range n.Args {
			n.Args[i] = replaceRates(a, problem)
		}
	case *parser.AggregateExpr:
		n.Expr = replaceRates(n.Expr, problem)
		if n.Param != nil {
			n.Param = replaceRates(n.Param, problem)
		}
	case *parser.BinaryExpr:
		n.LHS, n.RHS = replaceRates(n.LHS, problem), replaceRates(n.RHS, problem)
	case *parser.ParenExpr:
		n.Expr = replaceRates(n.Expr, problem)
	case *parser.UnaryExpr:
		n.Expr = replaceRates(n.Expr, problem)
	case *parser.MatrixSelector:
		if n.Range == sentinelRange {
			*problem = fmt.Errorf("%s is read outside rate(); only rate() over %s has an exact counter form", windowVar, windowVar)
		}
	case *parser.SubqueryExpr:
		if n.Range == sentinelRange {
			*problem = fmt.Errorf("a subquery over %s has no exact counter form; write the query with rate() over %s", windowVar, windowVar)
		}
		n.Expr = replaceRates(n.Expr, problem)
	}
	return e
}
