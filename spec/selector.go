package spec

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/spec/querybound"
)

// checkSelector reports selector keys that are not label names.
func checkSelector(d *doc, path string, sel map[string]string) Problems {
	var ps Problems
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		// Dotted OpenTelemetry attribute names are valid UTF-8 label names.
		if !query.ValidLabelName(k) && !utf8Label(k) {
			ps = append(ps, d.errorf(path+"."+k, "%q is not a Prometheus label name", k))
		}
		if msg := engineSetLabel(k); msg != "" {
			ps = append(ps, d.errorf(path+"."+k, "%s", msg))
		}
		if msg := textProblem(sel[k], oneLine); msg != "" {
			ps = append(ps, d.errorf(path+"."+k, "%s", msg))
		}
	}
	return ps
}

// engineSetLabel says why a selector must not name label k, or "" when it
// may: the engine or Prometheus sets these per series, so pinning one would
// keep a single bucket, outcome or name out of every SLI query.
func engineSetLabel(k string) string {
	switch {
	case k == "le" || k == "quantile":
		return fmt.Sprintf("%q is set on each histogram or summary series; the SLI picks buckets itself from the threshold, so select on labels such as model_name instead", k)
	case k == "finished_reason":
		return fmt.Sprintf("%q is set by the engine per request outcome; the errors SLI reads outcomes itself, so select on labels such as model_name instead", k)
	case strings.HasPrefix(k, "__"):
		return fmt.Sprintf("%q is reserved for Prometheus' internal labels (the metric name is chosen by the SLI); select on labels such as model_name instead", k)
	}
	return ""
}

// mergeSelector is the spec's selector with an objective's on top: the
// objective's value wins for a label both name.
func mergeSelector(spec, objective map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, spec)
	maps.Copy(out, objective)
	return out
}

// selectorText prints label equality matchers in name order.
func selectorText(sel map[string]string) string {
	keys := slices.Sorted(maps.Keys(sel))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", labelText(k), sel[k])
	}
	return strings.Join(parts, ",")
}

// labelText quotes a label name that is not a legacy Prometheus name
// (gen_ai.request.model), as PromQL requires.
func labelText(name string) string {
	if query.ValidLabelName(name) {
		return name
	}
	return fmt.Sprintf("%q", name)
}

// seriesSelector prints a selector of one series by name and equality
// matchers (name, value pairs); a UTF-8 metric name goes inside the braces.
func seriesSelector(name string, pairs ...string) string {
	var ms []string
	head := name
	if !query.ValidMetricName(name) {
		head = ""
		ms = append(ms, fmt.Sprintf("%q", name))
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		ms = append(ms, fmt.Sprintf("%s=%q", labelText(pairs[i]), pairs[i+1]))
	}
	if len(ms) == 0 {
		return head
	}
	return head + "{" + strings.Join(ms, ",") + "}"
}

// utf8Label accepts the dotted attribute names OpenTelemetry keeps under
// UTF-8 translation (gen_ai.request.model): legacy characters and dots.
func utf8Label(name string) bool {
	return dottedLabel.MatchString(name) && !strings.HasPrefix(name, "__")
}

var dottedLabel = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*(\.[a-zA-Z0-9_]+)+$`)

// withSelector adds the service's label matchers to every selector of a query.
func withSelector(q string, sel map[string]string) (string, error) {
	if err := querybound.Check(q); err != nil {
		return "", err
	}
	expr, err := query.NewParser().ParseExpr(q)
	if err != nil {
		return "", fmt.Errorf("invalid PromQL %q: %v", q, err)
	}
	keys := slices.Sorted(maps.Keys(sel))
	for _, vs := range query.Selectors(expr) {
		for _, k := range keys {
			if !hasMatcher(vs, k) {
				vs.LabelMatchers = append(vs.LabelMatchers, labels.MustNewMatcher(labels.MatchEqual, k, sel[k]))
			}
		}
	}
	return expr.String(), nil
}

func hasMatcher(vs *parser.VectorSelector, name string) bool {
	return slices.ContainsFunc(vs.LabelMatchers, func(m *labels.Matcher) bool { return m.Name == name })
}

func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0 && i < len(s)-1
		if !ok {
			return false
		}
	}
	return true
}
