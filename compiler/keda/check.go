package keda

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/promql/parser"
)

// hpaPrefix is what KEDA puts before the ScaledObject's name to name the HPA
// it creates, unless advanced.horizontalPodAutoscalerConfig.name is set.
const hpaPrefix = "keda-hpa-"

var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// check applies the rules KEDA's admission webhook enforces and its CRD
// schema cannot express, plus the Prometheus scaler's own metadata rules, so
// a generated object is never refused at apply time.
func check(o scaledObject) error {
	name := o.Metadata.Name
	hpaName := ""
	if a := o.Spec.Advanced; a != nil && a.HorizontalPodAutoscalerConfig != nil {
		hpaName = a.HorizontalPodAutoscalerConfig.Name
	}
	switch {
	case name == "" || !dnsSubdomain.MatchString(name):
		return fmt.Errorf("ScaledObject name %q is not a DNS subdomain", name)
	case len(name) > 63:
		return fmt.Errorf("ScaledObject name %q is longer than 63 characters", name)
	case hpaName == "" && len(hpaPrefix+name) > 63:
		return fmt.Errorf("ScaledObject name %q is longer than %d characters, so KEDA's HPA name %s%s would exceed 63", name, 63-len(hpaPrefix), hpaPrefix, name)
	case hpaName != "" && (len(hpaName) > 63 || !dnsSubdomain.MatchString(hpaName)):
		return fmt.Errorf("HPA name %q is not a DNS subdomain of at most 63 characters", hpaName)
	case o.Metadata.Namespace != "" && (len(o.Metadata.Namespace) > 63 || !dnsLabel.MatchString(o.Metadata.Namespace)):
		return fmt.Errorf("namespace %q is not a DNS label", o.Metadata.Namespace)
	}

	s := o.Spec
	switch {
	case s.ScaleTargetRef.Name == "":
		return fmt.Errorf("scale target has no name")
	case s.MinReplicaCount < 0:
		return fmt.Errorf("minReplicaCount %d is negative", s.MinReplicaCount)
	case s.MaxReplicaCount < 1:
		return fmt.Errorf("maxReplicaCount %d is below 1", s.MaxReplicaCount)
	case s.MinReplicaCount > s.MaxReplicaCount:
		return fmt.Errorf("minReplicaCount %d is above maxReplicaCount %d", s.MinReplicaCount, s.MaxReplicaCount)
	case len(s.Triggers) == 0:
		return fmt.Errorf("a ScaledObject needs at least one trigger")
	}

	names := map[string]bool{}
	external := false
	for i, t := range s.Triggers {
		if t.Type == "" {
			return fmt.Errorf("trigger %d has no type", i)
		}
		if t.Name != "" {
			if names[t.Name] {
				return fmt.Errorf("trigger name %q is used twice", t.Name)
			}
			names[t.Name] = true
		}
		if t.Type != "cpu" && t.Type != "memory" {
			external = true
		}
		if t.Type == "prometheus" {
			if err := checkPrometheusMetadata(t); err != nil {
				return fmt.Errorf("trigger %s: %w", t.Name, err)
			}
		}
	}

	if f := s.Fallback; f != nil {
		switch {
		case f.Replicas < 0 || f.FailureThreshold < 0:
			return fmt.Errorf("fallback replicas %d and failureThreshold %d must not be negative", f.Replicas, f.FailureThreshold)
		case !external:
			return fmt.Errorf("a fallback needs at least one trigger that is not cpu or memory")
		}
	}

	if a := s.Advanced; a != nil && a.HorizontalPodAutoscalerConfig != nil && a.HorizontalPodAutoscalerConfig.Behavior != nil {
		b := a.HorizontalPodAutoscalerConfig.Behavior
		for _, r := range []struct {
			what  string
			rules *scalingRules
		}{{"scale-up", b.ScaleUp}, {"scale-down", b.ScaleDown}} {
			if r.rules != nil && (r.rules.StabilizationWindowSeconds < 0 || r.rules.StabilizationWindowSeconds > 3600) {
				return fmt.Errorf("%s stabilization window %ds is outside the HPA's 0..3600s", r.what, r.rules.StabilizationWindowSeconds)
			}
		}
	}
	return nil
}

// checkPrometheusMetadata follows KEDA's Prometheus scaler: serverAddress,
// query and a numeric threshold are required; activationThreshold and
// ignoreNullValues must parse; metricType is Value or AverageValue.
func checkPrometheusMetadata(t trigger) error {
	m := t.Metadata
	for _, k := range []string{"serverAddress", "query", "threshold"} {
		if m[k] == "" {
			return fmt.Errorf("metadata.%s is required", k)
		}
	}
	threshold, err := strconv.ParseFloat(m["threshold"], 64)
	if err != nil || threshold <= 0 {
		return fmt.Errorf("metadata.threshold %q is not a number above zero", m["threshold"])
	}
	if v, ok := m["activationThreshold"]; ok {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("metadata.activationThreshold %q is not a number", v)
		}
	}
	if v, ok := m["ignoreNullValues"]; ok {
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("metadata.ignoreNullValues %q is not true or false", v)
		}
	}
	switch t.MetricType {
	case "", "AverageValue", "Value":
	default:
		return fmt.Errorf("metricType %q is not Value or AverageValue", t.MetricType)
	}
	return nil
}

// checkQueries parses every Prometheus trigger's query, checks that it reads
// only allowed metric names, and that it yields at most one element, since
// KEDA's scaler fails on more.
func checkQueries(o scaledObject, allowed map[string]bool) error {
	p := query.NewParser()
	for _, t := range o.Spec.Triggers {
		if t.Type != "prometheus" {
			continue
		}
		expr, err := p.ParseExpr(t.Metadata["query"])
		if err != nil {
			return fmt.Errorf("trigger %s: query does not parse: %w", t.Name, err)
		}
		if err := readsOnly(expr, allowed); err != nil {
			return fmt.Errorf("trigger %s: %w", t.Name, err)
		}
		if !single(expr) {
			return fmt.Errorf("trigger %s: query %s may return several series; KEDA needs one (aggregate it with sum or max)", t.Name, expr)
		}
	}
	return nil
}

func readsOnly(expr parser.Expr, allowed map[string]bool) error {
	for _, vs := range query.Selectors(expr) {
		if vs.Name == "" {
			return fmt.Errorf("selector %s names no metric", vs)
		} else if !allowed[vs.Name] {
			return fmt.Errorf("query reads %s, which neither the engine nor the generated rules provide", vs.Name)
		}
	}
	return nil
}

// single tells whether an expression returns at most one series: an
// aggregation without grouping, a histogram quantile over buckets grouped
// by le alone, functions and arithmetic of those, or `a or on () b` of two.
func single(expr parser.Expr) bool {
	switch e := expr.(type) {
	case *parser.ParenExpr:
		return single(e.Expr)
	case *parser.NumberLiteral:
		return true
	case *parser.AggregateExpr:
		switch e.Op {
		case parser.SUM, parser.MAX, parser.MIN, parser.AVG, parser.COUNT:
			return !e.Without && len(e.Grouping) == 0
		}
		return false
	case *parser.BinaryExpr:
		if e.Op == parser.LOR {
			// on () matches everything: the right side fills in only
			// when the left one is empty.
			vm := e.VectorMatching
			return vm != nil && vm.On && len(vm.MatchingLabels) == 0 && single(e.LHS) && single(e.RHS)
		}
		if e.Op == parser.LAND || e.Op == parser.LUNLESS {
			return single(e.LHS)
		}
		return single(e.LHS) && single(e.RHS)
	case *parser.Call:
		switch e.Func.Name {
		case "histogram_quantile":
			if len(e.Args) != 2 {
				return false
			}
			// Classic buckets summed by le, or native histograms summed whole.
			inner, ok := query.Unparen(e.Args[1]).(*parser.AggregateExpr)
			return ok && inner.Op == parser.SUM && !inner.Without && (len(inner.Grouping) == 1 && inner.Grouping[0] == "le" || len(inner.Grouping) == 0)
		case "clamp_min", "clamp_max", "histogram_count", "histogram_sum", "histogram_fraction", "abs":
			// One element in, one out: the vector is the only vector argument.
			for _, arg := range e.Args {
				if arg.Type() == parser.ValueTypeVector && !single(arg) {
					return false
				}
			}
			return true
		case "deriv":
			// deriv of a subquery of one series is one series.
			sq, ok := query.Unparen(e.Args[0]).(*parser.SubqueryExpr)
			return ok && single(sq.Expr)
		}
	}
	return false
}
