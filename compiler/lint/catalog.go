package lint

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/inferslo/inferslo/spec/engine"
)

// metricFacts is what the engine catalog says about one series name.
type metricFacts struct {
	Name, Family, Suffix string
	Kind                 string
	Engine               string
	Buckets              []float64
	// ReplacedBy and Removed are set for a metric an engine renamed or
	// dropped.
	ReplacedBy, Removed, Since, Note string
}

// catalog indexes the engine catalog by series name.
type catalog struct {
	families map[string]*metricFacts
	// prefixes are the engine namespaces ("vllm:"), so an unknown name in
	// one can be told apart from a metric of some other exporter.
	prefixes map[string]string
	// declared are bucket sets specs in the lint set declare, by family.
	declared map[string][][]float64
	// older are bucket sets of older releases, by family.
	older map[string][]olderBuckets
	// pinned are the families a spec in the lint set reads from an older
	// release it names (engineVersion): not renamed for this set.
	pinned map[string]bool
}

// olderBuckets is a bucket set an older release of an engine used.
type olderBuckets struct {
	buckets []float64
	change  string
}

// olderBucket says which older release has v as a bucket of the family.
func (c *catalog) olderBucket(f metricFacts, v float64) (string, bool) {
	for _, o := range c.older[f.Family] {
		if hasBucket(o.buckets, v) {
			return o.change, true
		}
	}
	return "", false
}

// declare records a bucket set a spec declares for a histogram.
func (c *catalog) declare(family string, buckets []float64) {
	if len(buckets) > 0 {
		c.declared[family] = append(c.declared[family], buckets)
	}
}

// isBucket says whether v is a bucket of the family: in the catalog, or
// in a set a spec declares.
func (c *catalog) isBucket(f metricFacts, v float64) bool {
	return hasBucket(f.Buckets, v) || slices.ContainsFunc(c.declared[f.Family], func(b []float64) bool { return hasBucket(b, v) })
}

func newCatalog(c *engine.Catalog) *catalog {
	cat := &catalog{families: map[string]*metricFacts{}, prefixes: map[string]string{}, declared: map[string][][]float64{}, older: map[string][]olderBuckets{}, pinned: map[string]bool{}}
	add := func(e *engine.Engine, name, kind string, buckets []float64) {
		if name == "" {
			return
		}
		if _, ok := cat.families[name]; !ok {
			cat.families[name] = &metricFacts{Name: name, Family: name, Kind: kind, Engine: e.ID, Buckets: buckets}
		}
		if i := strings.Index(name, ":"); i > 0 {
			cat.prefixes[name[:i+1]] = e.ID
		}
	}
	for _, id := range c.IDs() {
		e := c.Engines[id]
		eachMetric(e, func(name, kind string, buckets []float64) {
			// Counters named by a histogram's _count are the histogram's.
			if _, ok := cat.lookup(name); kind == engine.KindCounter && ok {
				return
			}
			add(e, name, kind, buckets)
		})
		// Older releases' histograms, gauges and bucket sets are real too.
		for _, v := range e.Variants {
			for _, role := range slices.Sorted(maps.Keys(v.Histograms)) {
				h := v.Histograms[role]
				name := h.Metric
				if name == "" && e.Histograms[role] != nil {
					name = e.Histograms[role].Metric
				}
				add(e, name, engine.KindHistogram, h.Buckets)
				if len(h.Buckets) > 0 {
					when := v.Change
					if v.Before != "" {
						when = "before " + v.Before + ": " + v.Change
					}
					cat.older[name] = append(cat.older[name], olderBuckets{buckets: h.Buckets, change: when})
				}
			}
			for _, role := range slices.Sorted(maps.Keys(v.Gauges)) {
				for _, n := range engine.MetricNames(v.Gauges[role]) {
					add(e, n, engine.KindGauge, nil)
				}
			}
		}
	}
	// Renamed and removed metrics resolve to what they were: the kind and
	// buckets of their replacement, and the change itself.
	for _, id := range c.IDs() {
		for _, ch := range c.Engines[id].Changes {
			f := metricFacts{Kind: engine.KindGauge}
			if r, ok := cat.families[ch.ReplacedBy]; ok {
				f = *r
			}
			f.Name, f.Family, f.Engine = ch.Metric, ch.Metric, id
			f.ReplacedBy, f.Since, f.Removed, f.Note = ch.ReplacedBy, ch.Since, ch.Removed, ch.Note
			cat.families[ch.Metric] = &f
		}
	}
	return cat
}

// eachMetric calls add with every series family an engine's catalog entry
// names (its current release): histograms with their buckets, gauges,
// histograms no SLI reads, and counters (means, requests, errors, failure
// kinds).
func eachMetric(e *engine.Engine, add func(name, kind string, buckets []float64)) {
	for _, role := range slices.Sorted(maps.Keys(e.Histograms)) {
		h := e.Histograms[role]
		add(h.Metric, engine.KindHistogram, h.Buckets)
	}
	for _, role := range slices.Sorted(maps.Keys(e.Gauges)) {
		for _, n := range engine.MetricNames(e.Gauges[role]) {
			add(n, engine.KindGauge, nil)
		}
	}
	for _, role := range slices.Sorted(maps.Keys(e.Distributions)) {
		add(e.Distributions[role], engine.KindHistogram, nil)
	}
	var counters []string
	for _, role := range slices.Sorted(maps.Keys(e.Means)) {
		m := e.Means[role]
		counters = append(counters, m.Sum, m.Count)
	}
	queries := []string{e.Requests, e.Errors.Total, e.Errors.Bad}
	for _, role := range slices.Sorted(maps.Keys(e.Counters)) {
		queries = append(queries, e.Counters[role])
	}
	for _, q := range queries {
		counters = append(counters, engine.MetricNames(q)...)
	}
	for _, n := range counters {
		add(n, engine.KindCounter, nil)
	}
}

// lookup resolves a series name, histogram suffixes included.
func (c *catalog) lookup(name string) (metricFacts, bool) {
	if f, ok := c.families[name]; ok {
		return *f, true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if fam, ok := strings.CutSuffix(name, suf); ok {
			if f, ok := c.families[fam]; ok && f.Kind == engine.KindHistogram {
				out := *f
				out.Name, out.Suffix = name, suf
				return out, true
			}
		}
	}
	return metricFacts{}, false
}

// engineOf returns the engine whose namespace the name is in.
func (c *catalog) engineOf(name string) (string, bool) {
	if i := strings.Index(name, ":"); i > 0 {
		id, ok := c.prefixes[name[:i+1]]
		return id, ok
	}
	return "", false
}

// names lists the catalog's series families of an engine.
func (c *catalog) names(engineID string) []string {
	var out []string
	for n, f := range c.families {
		if f.Engine == engineID && f.ReplacedBy == "" && f.Removed == "" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
