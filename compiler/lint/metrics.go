package lint

import (
	"slices"
	"strconv"
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/scrape"
)

// Scrape is the series of one /metrics exposition (compiler/scrape reads
// it, bounded).
type Scrape = scrape.Scrape

// scrapeSelectors yields the selectors worth checking against the scrape:
// those of raw metrics, not of recording rules.
func (r *reporter) scrapeSelectors(q *Query, fn func(vs *parser.VectorSelector, name string, series []map[string]string)) {
	if r.opts.Scrape == nil {
		return
	}
	for _, vs := range query.Selectors(q.Expr) {
		name := metricName(vs)
		if name == "" || r.recorded[name] {
			continue
		}
		if _, engine := r.catalog.engineOf(name); strings.Contains(name, ":") && !engine {
			continue // a recording rule defined elsewhere
		}
		fn(vs, name, r.opts.Scrape.Of(name))
	}
}

// usable says whether a matcher can be checked: Grafana variables are not
// values.
func usable(q *Query, m *labels.Matcher) bool {
	if m.Name == query.MetricNameLabel {
		return false
	}
	return !isVariable(q, m) && (m.Type == labels.MatchEqual || m.Type == labels.MatchRegexp)
}

func isVariable(q *Query, m *labels.Matcher) bool {
	return q.Vars && (strings.Contains(m.Value, "$") || strings.Contains(m.Value, "[["))
}

var checkMetricsNoSeries = Check{
	ID: "metrics/no-series", Severity: Error,
	Summary: "With --metrics: a selector matches no series of the scrape.",
	Query: func(r *reporter, q *Query) {
		r.scrapeSelectors(q, func(vs *parser.VectorSelector, name string, series []map[string]string) {
			if len(series) == 0 {
				r.atNode(q, vs, "the scrape %s has no series named %s", r.opts.Scrape.Source, name)
				return
			}
			// Each matcher alone may match some series, yet none all.
			for _, m := range vs.LabelMatchers {
				if usable(q, m) && !anyMatches(series, m) {
					return // reported per label
				}
			}
			for _, ls := range series {
				if matchesAll(q, ls, vs.LabelMatchers) {
					return
				}
			}
			r.atNode(q, vs, "no series of %s in the scrape matches all of %s", name, vs.String())
		})
	},
}

var checkMetricsLabelValue = Check{
	ID: "metrics/label-value", Severity: Error,
	Summary: "With --metrics: a label matcher matches no value the scrape has.",
	Query: func(r *reporter, q *Query) {
		r.scrapeSelectors(q, func(vs *parser.VectorSelector, name string, series []map[string]string) {
			for _, m := range vs.LabelMatchers {
				if len(series) == 0 || m.Name == "le" || !usable(q, m) || anyMatches(series, m) {
					continue
				}
				vals := scrape.Values(series, m.Name)
				if len(vals) == 0 {
					r.atLabel(q, vs, m.Name, "no series of %s in the scrape has a %s label", name, m.Name)
					continue
				}
				r.atLabel(q, vs, m.Name, "%s has no series with %s; the scrape has %s=%s", name, m.String(), m.Name, quoteList(vals, 8))
			}
		})
	},
}

var checkMetricsLe = Check{
	ID: "metrics/le-not-exposed", Severity: Error,
	Summary: "With --metrics: an `le` the scraped histogram does not expose.",
	Query: func(r *reporter, q *Query) {
		r.scrapeSelectors(q, func(vs *parser.VectorSelector, name string, series []map[string]string) {
			m := matcher(vs, "le")
			if m == nil || len(series) == 0 || !usable(q, m) || anyMatches(series, m) {
				return
			}
			vals := scrape.Values(series, "le")
			r.atLabel(q, vs, "le", "%s exposes no bucket %s; it has le=%s", name, m.String(), quoteList(vals, 30))
		})
	},
}

func anyMatches(series []map[string]string, m *labels.Matcher) bool {
	return slices.ContainsFunc(series, func(ls map[string]string) bool { return m.Matches(ls[m.Name]) })
}

func matchesAll(q *Query, ls map[string]string, ms []*labels.Matcher) bool {
	for _, m := range ms {
		if m.Name != query.MetricNameLabel && !isVariable(q, m) && !m.Matches(ls[m.Name]) {
			return false
		}
	}
	return true
}

// quoteList quotes at most max values, then says how many more there are.
func quoteList(vs []string, max int) string {
	qs := slices.Clone(truncate(vs, max))
	for i, v := range qs[:min(len(vs), max)] {
		qs[i] = strconv.Quote(v)
	}
	return strings.Join(qs, ", ")
}
