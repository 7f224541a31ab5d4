package keda

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// engines is a synthetic /metrics endpoint serving one series per selector
// the triggers and rules read, with values that follow a load:
//   - _bucket series are a histogram where every request takes latency
//     seconds, over a ladder of bounds plus every le a selector names;
//   - _count, _sum and _total series count requests at rps per second,
//     except "bad" series (an error metric, or a selector narrowing another
//     one of its metric, like finished_reason="error"), which count
//     errorShare of them;
//   - any other series is a gauge, 0 unless set (a queue depth).
type engines struct {
	start      time.Time
	rps        float64
	latency    float64
	errorShare float64
	series     map[string]*engineSeries // by exposition key
	// bounds are the le values of each _bucket metric, as selectors
	// write them (Prometheus matches the text).
	bounds map[string]map[float64]string
}

type engineSeries struct {
	name   string
	labels map[string]string
	bad    bool
	gauge  float64
}

// ladder is the histogram bounds every _bucket metric has.
var ladder = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}

func newEngines(rps, latency, errorShare float64) *engines {
	return &engines{start: time.Now(), rps: rps, latency: latency, errorShare: errorShare,
		series: map[string]*engineSeries{}, bounds: map[string]map[float64]string{}}
}

// read adds the series every selector of a PromQL expression reads,
// except recorded and ALERTS series, and returns them.
func (e *engines) read(expr string) ([]*engineSeries, error) {
	ast, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", expr, err)
	}
	var out []*engineSeries
	for _, vs := range parser.ExtractSelectors(ast) {
		s := &engineSeries{labels: map[string]string{}}
		le := ""
		for _, m := range vs {
			switch {
			case m.Name == labels.MetricName && m.Type == labels.MatchEqual:
				s.name = m.Value
			case m.Name == "le" && m.Type == labels.MatchEqual:
				le = m.Value
			case m.Type == labels.MatchEqual && m.Value != "":
				s.labels[m.Name] = m.Value
			case m.Type == labels.MatchRegexp:
				v, ok := matching(m)
				if !ok {
					return nil, fmt.Errorf("%s: no value found for %s", expr, m)
				}
				s.labels[m.Name] = v
			case m.Type == labels.MatchNotEqual && m.Value == "":
				s.labels[m.Name] = "x"
			}
		}
		if s.name == "" || strings.HasPrefix(s.name, "inferslo:") || s.name == "ALERTS" {
			continue
		}
		if le != "" {
			b, err := strconv.ParseFloat(le, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: le %q", expr, le)
			}
			if e.bounds[s.name] == nil {
				e.bounds[s.name] = map[float64]string{}
			}
			e.bounds[s.name][b] = le
		}
		k := key(s.name, s.labels)
		if old, ok := e.series[k]; ok {
			s = old
		} else {
			e.series[k] = s
		}
		out = append(out, s)
	}
	return out, nil
}

// matching finds a value a regular-expression matcher accepts.
func matching(m *labels.Matcher) (string, bool) {
	var candidates []string
	for _, alt := range strings.Split(strings.Trim(m.Value, "^$()"), "|") {
		candidates = append(candidates, regexp.QuoteMeta(alt), alt)
	}
	candidates = append(candidates, "error", "500", "503", "429", "abort", "1", "a")
	for _, c := range candidates {
		if m.Matches(c) && c != "" {
			return c, true
		}
	}
	return "", false
}

// classify marks the bad series once every selector was read.
func (e *engines) classify() {
	byName := map[string][]*engineSeries{}
	for _, s := range e.series {
		byName[s.name] = append(byName[s.name], s)
	}
	errorName := regexp.MustCompile(`(?i)(error|fail|abort|reject)`)
	for name, ss := range byName {
		for _, s := range ss {
			s.bad = errorName.MatchString(name)
			for _, o := range ss {
				if o != s && narrows(s.labels, o.labels) {
					s.bad = true
				}
			}
		}
	}
}

// narrows tells whether a holds every label of b and more.
func narrows(a, b map[string]string) bool {
	if len(a) <= len(b) {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

func kind(name string) string {
	for _, suffix := range []string{"_bucket", "_count", "_sum", "_total"} {
		if strings.HasSuffix(name, suffix) {
			return suffix
		}
	}
	return "gauge"
}

func key(name string, ls map[string]string) string {
	names := make([]string, 0, len(ls))
	for k := range ls {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s=%q", k, ls[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

func (e *engines) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	elapsed := time.Since(e.start).Seconds() + 60
	keys := make([]string, 0, len(e.series))
	for k := range e.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := e.series[k]
		requests := e.rps * elapsed
		if s.bad {
			requests *= e.errorShare
		}
		switch kind(s.name) {
		case "_bucket":
			text := map[float64]string{}
			for _, b := range ladder {
				text[b] = strconv.FormatFloat(b, 'g', -1, 64)
			}
			maps.Copy(text, e.bounds[s.name])
			bounds := slices.Sorted(maps.Keys(text))
			for _, b := range bounds {
				n := 0.0
				if e.latency <= b {
					n = requests
				}
				ls := map[string]string{"le": text[b]}
				for k, v := range s.labels {
					ls[k] = v
				}
				fmt.Fprintf(w, "%s %g\n", key(s.name, ls), n)
			}
			ls := map[string]string{"le": "+Inf"}
			for k, v := range s.labels {
				ls[k] = v
			}
			fmt.Fprintf(w, "%s %g\n", key(s.name, ls), requests)
		case "_sum":
			fmt.Fprintf(w, "%s %g\n", k, requests*e.latency)
		case "_count", "_total":
			fmt.Fprintf(w, "%s %g\n", k, requests)
		default:
			fmt.Fprintf(w, "%s %g\n", k, s.gauge)
		}
	}
}
