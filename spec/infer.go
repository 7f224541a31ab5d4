package spec

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
)

// normaliseLe writes every numeric le of a bucket selector the way
// Prometheus 3 stores it (le="1" as "1.0"), so that a plain OpenSLO query
// written with an exporter's spelling matches the stored series.
func normaliseLe(e parser.Expr) {
	for _, vs := range query.Selectors(e) {
		if !strings.HasSuffix(engine.SelectedName(vs), "_bucket") {
			continue
		}
		for _, m := range vs.LabelMatchers {
			if m.Name != "le" || m.Type != labels.MatchEqual && m.Type != labels.MatchNotEqual {
				continue
			}
			if f, err := strconv.ParseFloat(m.Value, 64); err == nil {
				m.Value = labels.FormatOpenMetricsFloat(f)
			}
		}
	}
}

// inferEngine gives a plain OpenSLO SLO without an engine annotation the
// treatment of the catalog engine whose latency histogram its good query
// counts: the threshold is the bucket it names, which must be one of the
// engine's, and the dashboards get the engine's panels.
func (l *loader) inferEngine(sli object[v1.SLI], s *model.SLO, ps *Problems) *model.Inference {
	if s.SLI.Good == nil {
		return nil
	}
	const goodPath = "spec.ratioMetric.good.metricSource.spec.query"
	for _, vs := range selectorsOf(s.SLI.Good.Expr) {
		name := engine.SelectedName(vs)
		info, ok := l.cat.Metric(name)
		if !ok || info.Kind != engine.KindHistogram || info.Suffix != "_bucket" {
			continue
		}
		var le *labels.Matcher
		for _, m := range vs.LabelMatchers {
			if m.Name == "le" && m.Type == labels.MatchEqual {
				le = m
			}
		}
		bound, err := strconv.ParseFloat(valueOf(le), 64)
		if err != nil {
			continue
		}
		use, exact := bucketUse(info.Uses, bound)
		e, ok := l.cat.Engine(use.Engine)
		if !ok {
			continue
		}
		h := engine.Histogram{Metric: info.Family, Unit: use.Unit, Buckets: use.Buckets}
		seconds := bound / h.Scale()
		if !exact {
			*ps = append(*ps, sli.errorf(goodPath, "le=%q is not a bucket boundary of %s (%s %s), so the query counts no requests; %s%s",
				le.Value, info.Family, e.Title, use.Versions, nearestLe(&h, seconds), nearest(&h, seconds)))
			return nil
		}
		inf := &model.Inference{Engine: e.ID, EngineTitle: e.Title, Role: use.Role, Histogram: info.Family, Buckets: use.Buckets, Unit: h.UnitOrSeconds()}
		inf.Threshold = model.DecimalFromFloat(seconds)
		var sel []string
		for _, m := range vs.LabelMatchers {
			if m.Name != query.MetricNameLabel && m.Name != "le" && m.Type == labels.MatchEqual {
				sel = append(sel, m.String())
				inf.SelectorLabels = append(inf.SelectorLabels, m.Name)
			}
		}
		sort.Strings(sel)
		sort.Strings(inf.SelectorLabels)
		inf.Selector = strings.Join(sel, ",")
		inf.Signals = l.signalsOf(e)
		return inf
	}
	return nil
}

// engineSelector is the selector a plain OpenSLO SLO that names its engine
// but no inferslo.dev/selector scopes that engine's series by: the equality
// matchers (le aside) every selector of the SLI's total query puts on the
// engine's own series, so its dashboard panels draw the SLO's traffic
// alone. It is empty when the total reads none of the engine's series.
func (l *loader) engineSelector(engineID, total string) (string, []string) {
	var common map[string]string
	for _, vs := range selectorsOf(total) {
		info, ok := l.cat.Metric(engine.SelectedName(vs))
		if !ok || !slices.ContainsFunc(info.Uses, func(u engine.MetricUse) bool { return u.Engine == engineID }) {
			continue
		}
		these := map[string]string{}
		for _, m := range vs.LabelMatchers {
			if m.Name != query.MetricNameLabel && m.Name != "le" && m.Type == labels.MatchEqual {
				these[m.Name] = m.String()
			}
		}
		if common == nil {
			common = these
			continue
		}
		for k, v := range common {
			if these[k] != v {
				delete(common, k)
			}
		}
	}
	var sel, names []string
	for _, k := range slices.Sorted(maps.Keys(common)) {
		sel, names = append(sel, common[k]), append(names, k)
	}
	return strings.Join(sel, ","), names
}

// nearestLe names the bounds around a threshold as le values.
func nearestLe(h *engine.Histogram, seconds float64) string {
	var les []string
	below, above := h.Neighbours(seconds)
	for _, b := range []float64{below, above} {
		if !math.IsNaN(b) {
			les = append(les, strconv.Quote(labels.FormatOpenMetricsFloat(b*h.Scale())))
		}
	}
	if len(les) == 0 {
		return ""
	}
	return "write le=" + strings.Join(les, " or le=") + ": "
}

func valueOf(m *labels.Matcher) string {
	if m == nil {
		return ""
	}
	return m.Value
}

// bucketUse picks the histogram use whose buckets hold bound, the newest
// release first; without one, the newest, to name its neighbours.
func bucketUse(uses []engine.MetricUse, bound float64) (engine.MetricUse, bool) {
	for _, u := range uses {
		h := engine.Histogram{Buckets: u.Buckets}
		if _, ok := h.Bucket(bound); ok && u.Kind == engine.KindHistogram {
			return u, true
		}
	}
	return uses[0], false
}

// signalsOf is the engine's series the dashboards and KEDA read beside the
// SLI: a catalog engine's as made once for all its SLOs.
func (l *loader) signalsOf(eng *engine.Engine) model.Signals {
	if s, ok := l.signals[eng]; ok {
		return s
	}
	return signalsOf(eng)
}

func signalsOf(eng *engine.Engine) model.Signals {
	sig := model.Signals{
		QueueDepth:       eng.Gauges["queue_depth"],
		Running:          eng.Gauges["running"],
		KVCacheUsage:     eng.Gauges["kv_cache_usage"],
		Requests:         eng.Requests,
		PromptTokens:     eng.Counters["prompt_tokens"],
		GenerationTokens: eng.Counters["generation_tokens"],
		Buckets:          map[string][]float64{},
		Units:            map[string]string{},
	}
	for role, dst := range map[string]*string{"ttft": &sig.TTFT, "itl": &sig.ITL, "tpot": &sig.TPOT, "e2e": &sig.E2E, "queue": &sig.Queue} {
		if h, ok := eng.Histograms[role]; ok {
			*dst = h.Metric
			sig.Buckets[h.Metric] = h.Buckets
			sig.Units[h.Metric] = h.UnitOrSeconds()
		}
	}
	return sig
}
