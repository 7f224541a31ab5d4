package engine

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/inferslo/inferslo/compiler/query"
)

// Metric kinds.
const (
	KindHistogram = "histogram"
	KindCounter   = "counter"
	KindGauge     = "gauge"
)

// MetricInfo is what the catalog knows about one series name.
type MetricInfo struct {
	// Name is the series name asked for; Family is the metric it belongs
	// to (a histogram's name without _bucket, _sum or _count) and Suffix
	// the part cut off.
	Name, Family, Suffix string
	Kind                 string
	// Uses are the engines and releases that expose the family.
	Uses []MetricUse
	// Changes are renames and removals that concern the family, as the
	// old name or as the replacement.
	Changes []EngineChange
}

// MetricUse is one engine release range exposing a metric.
type MetricUse struct {
	Engine string
	// Versions is the engine's described releases, or the variant's
	// range when only a variant exposes the metric this way.
	Versions string
	// Role is the SLI role or signal the metric serves (ttft, queue_depth,
	// prompt_tokens, errors ...).
	Role    string
	Kind    string
	Unit    string    // histograms only
	Buckets []float64 // histograms only
	Labels  []string
}

// EngineChange is a Change with the engine that made it.
type EngineChange struct {
	Engine string
	Change
}

// Metric is the catalog's answer to "what is this series?", for lint's
// unknown- and renamed-metric checks and --metrics: it looks a series name
// up across every engine and version variant, resolving histogram series
// suffixes, and returns the engines and releases that expose it (Uses, with
// kind, role, unit, buckets and labels) and the renames and removals that
// concern it (Changes: the replacement and the release). ok is false when no
// engine exposes the name and no change mentions it.
func (c *Catalog) Metric(name string) (*MetricInfo, bool) {
	info := &MetricInfo{Name: name, Family: name}
	for _, id := range c.IDs() {
		e := c.Engines[id]
		for _, u := range e.uses() {
			if u.metric == name {
				info.Uses = append(info.Uses, u.use)
				continue
			}
			if u.use.Kind != KindHistogram {
				continue
			}
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if name == u.metric+suf {
					info.Family, info.Suffix = u.metric, suf
					info.Uses = append(info.Uses, u.use)
				}
			}
		}
		for _, ch := range e.Changes {
			if ch.Metric == info.Family || ch.ReplacedBy == info.Family {
				info.Changes = append(info.Changes, EngineChange{Engine: id, Change: ch})
			}
		}
	}
	// An errors query may name a histogram's _count series: the series is
	// still the histogram's, so its use comes first.
	sort.SliceStable(info.Uses, func(i, j int) bool { return info.Uses[i].Kind == KindHistogram && info.Uses[j].Kind != KindHistogram })
	if len(info.Uses) > 0 {
		info.Kind = info.Uses[0].Kind
	}
	return info, len(info.Uses) > 0 || len(info.Changes) > 0
}

type namedUse struct {
	metric string
	use    MetricUse
}

// uses lists every metric name of the engine and of its variants.
func (e *Engine) uses() []namedUse {
	var out []namedUse
	add := func(metric string, u MetricUse) {
		for _, o := range out {
			if o.metric == metric && o.use.Role == u.Role && o.use.Versions == u.Versions && slices.Equal(o.use.Buckets, u.Buckets) {
				return
			}
		}
		u.Engine = e.ID
		if u.Labels == nil {
			u.Labels = e.LabelsOf(metric)
		}
		out = append(out, namedUse{metric: metric, use: u})
	}
	hist := func(versions string, role string, h *Histogram) {
		add(h.Metric, MetricUse{Versions: versions, Role: role, Kind: KindHistogram, Unit: h.UnitOrSeconds(), Buckets: h.Buckets, Labels: h.Labels})
	}
	queries := func(versions, role, kind string, qs ...string) {
		for _, q := range qs {
			for _, n := range MetricNames(q) {
				add(n, MetricUse{Versions: versions, Role: role, Kind: kind})
			}
		}
	}
	for _, r := range slices.Sorted(maps.Keys(e.Histograms)) {
		hist(e.Versions, r, e.Histograms[r])
	}
	for _, r := range slices.Sorted(maps.Keys(e.Gauges)) {
		queries(e.Versions, r, KindGauge, e.Gauges[r])
	}
	for _, r := range slices.Sorted(maps.Keys(e.Counters)) {
		queries(e.Versions, r, KindCounter, e.Counters[r])
	}
	for _, r := range slices.Sorted(maps.Keys(e.Distributions)) {
		add(e.Distributions[r], MetricUse{Versions: e.Versions, Role: r, Kind: KindHistogram})
	}
	for _, r := range slices.Sorted(maps.Keys(e.Means)) {
		queries(e.Versions, r, KindCounter, e.Means[r].Sum, e.Means[r].Count)
	}
	queries(e.Versions, "requests", KindCounter, e.Requests)
	queries(e.Versions, "errors", KindCounter, e.Errors.Total, e.Errors.Bad)
	for _, r := range slices.Sorted(maps.Keys(e.Failures)) {
		queries(e.Versions, r, KindCounter, e.Failures[r].Total, e.Failures[r].Bad)
	}
	for _, va := range e.Variants {
		versions := va.Range()
		for _, r := range slices.Sorted(maps.Keys(va.Histograms)) {
			patch := va.Histograms[r]
			h := Histogram{Metric: patch.Metric, Unit: patch.Unit, Buckets: patch.Buckets}
			if base, ok := e.Histograms[r]; ok {
				h.Metric = cmp.Or(h.Metric, base.Metric)
				h.Unit = cmp.Or(h.Unit, base.Unit)
				if h.Buckets == nil {
					h.Buckets = base.Buckets
				}
			}
			if h.Metric != "" {
				hist(versions, r, &h)
			}
		}
		for _, r := range slices.Sorted(maps.Keys(va.Gauges)) {
			queries(versions, r, KindGauge, va.Gauges[r])
		}
	}
	return out
}

// Range prints the releases a variant covers.
func (va Variant) Range() string {
	switch {
	case va.From != "" && va.To != "":
		if va.From == va.To {
			return va.From
		}
		return va.From + " to " + va.To
	case va.From != "" && va.Before != "":
		return va.From + " to before " + va.Before
	case va.From != "":
		return va.From + " and later"
	case va.To != "":
		return "up to " + va.To
	case va.Before != "":
		return "before " + va.Before
	}
	return "every release"
}

// MetricNames lists the metric names a PromQL query selects, in order of
// appearance; a query that does not parse yields none.
func MetricNames(q string) []string {
	if strings.TrimSpace(q) == "" {
		return nil
	}
	expr, err := query.NewParser().ParseExpr(q)
	if err != nil {
		return nil
	}
	var out []string
	for _, vs := range query.Selectors(expr) {
		if name := SelectedName(vs); name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
