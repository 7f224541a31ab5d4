package spec

import (
	"slices"
	"strconv"

	"github.com/inferslo/inferslo/compiler/query"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
)

// checkEngineQueries compares a latency SLO's queries with the engine
// histogram its annotations name, so that what the alerts say (the
// threshold, the model) is what the queries count.
func checkEngineQueries(o object[v1.SLO], s *model.SLO, ps *Problems) {
	inf := s.Inference
	if inf == nil || inf.Role == "errors" || inf.Histogram == "" {
		return
	}
	if inf.Native && s.SLI.Good != nil {
		checkNativeGood(o, inf, s.SLI.Good.Expr, ps)
	} else if s.SLI.Good != nil {
		checkGoodBucket(o, inf, s.SLI.Good.Expr, ps)
	}
	if len(s.GroupBy) == 0 && s.SLI.Total != nil {
		warnUnselected(o, s.SLI.Total.Expr, ps)
	}
}

// checkGoodBucket refuses a good query that counts another bucket than
// the threshold names.
func checkGoodBucket(o object[v1.SLO], inf *model.Inference, good string, ps *Problems) {
	// The threshold names a bucket as the catalog spells it (TGI's
	// 1.683411219602823 for 1.68341122s), so compare with that bound. A
	// threshold off the buckets is reported where it is read.
	h := engine.Histogram{Metric: inf.Histogram, Unit: inf.Unit, Buckets: inf.Buckets}
	want, ok := h.Bucket(inf.Threshold.Float())
	if !ok {
		return
	}
	for _, vs := range selectorsOf(good) {
		if engine.SelectedName(vs) != inf.Histogram+"_bucket" {
			continue
		}
		for _, m := range vs.LabelMatchers {
			if m.Name != "le" {
				continue
			}
			if le, err := strconv.ParseFloat(m.Value, 64); m.Type == labels.MatchEqual && err == nil && le == want {
				continue
			}
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationThreshold,
				"the threshold %s is the bucket le=%q of %s, but the good query counts %s%s%q; make the threshold and the query name the same bucket",
				o.ext.Threshold, labels.FormatOpenMetricsFloat(want), inf.Histogram, m.Name, m.Type, m.Value))
		}
	}
}

// warnUnselected warns when the total query reads an engine series with no
// label selector: the SLO then spans every model in that Prometheus.
func warnUnselected(o object[v1.SLO], total string, ps *Problems) {
	for _, vs := range selectorsOf(total) {
		if !selectsOnlyName(vs) {
			continue
		}
		*ps = append(*ps, o.warnf("metadata.annotations."+AnnotationSelector,
			"%s has no label selector, so the SLO spans every model and replica that exports it to this Prometheus; select one model (model_name=\"...\" in the query, or selector: in the shorthand) or group by model (groupBy: [model_name])",
			engine.SelectedName(vs)))
		return
	}
}

// checkNativeGood compares the bounds of the good query's histogram_fraction
// over the SLI's native histogram with the threshold: from 0 (or below) up
// to the threshold.
func checkNativeGood(o object[v1.SLO], inf *model.Inference, good string, ps *Problems) {
	e, err := query.NewParser().ParseExpr(good)
	if err != nil {
		return
	}
	want := inf.NativeThreshold().Float()
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		c, ok := n.(*parser.Call)
		if !ok || c.Func.Name != "histogram_fraction" || len(c.Args) != 3 || !readsMetric(c.Args[2], inf.Histogram) {
			return nil
		}
		lower, lok := c.Args[0].(*parser.NumberLiteral)
		upper, uok := c.Args[1].(*parser.NumberLiteral)
		if !lok || !uok || lower.Val > 0 || upper.Val != want {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationThreshold,
				"the threshold %s is %s in the unit of %s, but the good query counts histogram_fraction(%s, %s, ...); make the threshold and the query's upper bound the same, from 0",
				o.ext.Threshold, labels.FormatOpenMetricsFloat(want), inf.Histogram, c.Args[0], c.Args[1]))
		}
		return nil
	})
}

// readsMetric tells whether an expression selects the named metric.
func readsMetric(e parser.Expr, name string) bool {
	return slices.ContainsFunc(query.Selectors(e), func(vs *parser.VectorSelector) bool { return engine.SelectedName(vs) == name })
}

// selectorsOf lists the vector selectors of a canonical query.
func selectorsOf(expr string) []*parser.VectorSelector {
	e, err := query.NewParser().ParseExpr(expr)
	if err != nil {
		return nil
	}
	return query.Selectors(e)
}

// selectsOnlyName is true for a selector that pins nothing but the metric
// name (and a bucket bound).
func selectsOnlyName(vs *parser.VectorSelector) bool {
	for _, m := range vs.LabelMatchers {
		if m.Name != query.MetricNameLabel && m.Name != "le" {
			return false
		}
	}
	return true
}
