package lint

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/spec/engine"
)

// Scrape is the series of one /metrics exposition, by metric name.
type Scrape struct {
	Source string
	series map[string][]map[string]string
}

// LoadScrape reads an exposition from a file or, for an http(s) URL, one
// GET with a timeout.
func LoadScrape(ctx context.Context, src string, timeout time.Duration) (*Scrape, error) {
	var data []byte
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return nil, fmt.Errorf("metrics url: %w", err)
		}
		req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("fetch metrics: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("fetch metrics %s: %s", src, resp.Status)
		}
		if data, err = io.ReadAll(io.LimitReader(resp.Body, 256<<20)); err != nil {
			return nil, fmt.Errorf("fetch metrics: %w", err)
		}
	} else {
		var err error
		if data, err = os.ReadFile(src); err != nil {
			return nil, fmt.Errorf("read metrics: %w", err)
		}
	}
	return ParseScrape(src, data)
}

// omExemplar is an OpenMetrics exemplar or trailing timestamp part.
var omExemplar = regexp.MustCompile(` # \{.*$`)

// ParseScrape parses the Prometheus text format or OpenMetrics. OpenMetrics
// is read as text after dropping what the text format lacks (# EOF,
// # UNIT, exemplars); its metadata lines are dropped too, since a counter
// family named without _total would not match its samples, and only series
// names and labels matter here.
func ParseScrape(source string, data []byte) (*Scrape, error) {
	openMetrics := bytes.Contains(data, []byte("\n# EOF")) || bytes.HasPrefix(data, []byte("# EOF"))
	if openMetrics {
		var b bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "#") {
				continue
			}
			b.WriteString(omExemplar.ReplaceAllString(l, ""))
			b.WriteByte('\n')
		}
		data = b.Bytes()
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("parse metrics %s: %w", source, err)
	}
	s := &Scrape{Source: source, series: map[string][]map[string]string{}}
	list := make([]string, 0, len(fams))
	for n := range fams {
		list = append(list, n)
	}
	sort.Strings(list)
	for _, n := range list {
		vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: 0}, fams[n])
		if err != nil {
			return nil, fmt.Errorf("parse metrics %s: %w", source, err)
		}
		for _, smp := range vec {
			ls := map[string]string{}
			for k, v := range smp.Metric {
				ls[string(k)] = string(v)
			}
			name := ls[model.MetricNameLabel]
			if le, ok := ls["le"]; ok {
				// Prometheus 3 stores bounds normalised: "1" as "1.0".
				if f, err := strconv.ParseFloat(le, 64); err == nil {
					ls["le"] = labels.FormatOpenMetricsFloat(f)
				}
			}
			s.series[name] = append(s.series[name], ls)
		}
	}
	return s, nil
}

// Series returns how many series the scrape holds.
func (s *Scrape) Series() int {
	n := 0
	for _, v := range s.series {
		n += len(v)
	}
	return n
}

// scrapeSelectors yields the selectors worth checking against the scrape:
// those of raw metrics, not of recording rules.
func (r *reporter) scrapeSelectors(q *Query, fn func(vs *parser.VectorSelector, name string, series []map[string]string)) {
	if r.opts.Scrape == nil {
		return
	}
	for _, vs := range engine.Selectors(q.Expr) {
		name := metricName(vs)
		if name == "" || r.recorded[name] {
			continue
		}
		if _, engine := r.catalog.engineOf(name); strings.Contains(name, ":") && !engine {
			continue // a recording rule defined elsewhere
		}
		fn(vs, name, r.opts.Scrape.series[name])
	}
}

// usable says whether a matcher can be checked: Grafana variables are not
// values.
func usable(q *Query, m *labels.Matcher) bool {
	if m.Name == labels.MetricName {
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
				vals := values(series, m.Name)
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
			vals := values(series, "le")
			sort.Slice(vals, func(i, j int) bool {
				a, _ := strconv.ParseFloat(vals[i], 64)
				b, _ := strconv.ParseFloat(vals[j], 64)
				return a < b
			})
			r.atLabel(q, vs, "le", "%s exposes no bucket %s; it has le=%s", name, m.String(), quoteList(vals, 30))
		})
	},
}

func anyMatches(series []map[string]string, m *labels.Matcher) bool {
	for _, ls := range series {
		if m.Matches(ls[m.Name]) {
			return true
		}
	}
	return false
}

func matchesAll(q *Query, ls map[string]string, ms []*labels.Matcher) bool {
	for _, m := range ms {
		if m.Name != labels.MetricName && !isVariable(q, m) && !m.Matches(ls[m.Name]) {
			return false
		}
	}
	return true
}

func values(series []map[string]string, label string) []string {
	seen := map[string]bool{}
	var out []string
	for _, ls := range series {
		if v, ok := ls[label]; ok && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

func quoteList(vs []string, max int) string {
	var b strings.Builder
	for i, v := range vs {
		if i == max {
			fmt.Fprintf(&b, ", … (%d more)", len(vs)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(v))
	}
	return b.String()
}
