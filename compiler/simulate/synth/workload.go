package synth

import (
	"fmt"
	"math"
	"sort"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/model"
)

// Shape is the cardinality of a synthetic workload.
type Shape struct {
	// Pods is the number of engine replicas; each has its own counters.
	Pods int
	// Models is the number of model_name values (or values of the first
	// selector label) served; only the SLO's own is selected by its rules,
	// the others are series Prometheus must skip.
	Models int
}

// Series is one synthetic counter. Its value is linear in the cumulative
// requests n and bad requests k of its pod since the pod's last restart:
// coefN·n + coefK·k. Linear forms let the truth be computed exactly from n
// and k while every series stays a plausible engine counter.
type Series struct {
	Labels       labels.Labels
	Pod          int
	CoefN, coefK float64
	// hist, when set, makes the series a native histogram at schema: each
	// observation's bucket holds its linear form in n and k (coefN and
	// coefK are then unused).
	hist   []observation
	schema int
}

// observation is a latency a native histogram series records, and how many
// times: coefN·n + coefK·k.
type observation struct {
	value        float64
	coefN, coefK float64
}

// Workload is every series of one SLO's simulation.
type Workload struct {
	Series []Series
	Pods   int
}

// New synthesizes the series an SLO's rules read. Engine SLOs get
// the engine's own shapes (the latency histogram with all its buckets,
// _count and _sum, and the finished-requests counter by finished_reason);
// plain ratio SLOs get series derived from the SLI queries' selectors. In
// both cases the function checks that the SLI, evaluated over these series,
// is exactly bad/total = k/n, so scenarios control the burn rate.
func New(slo model.SLO, shape Shape) (*Workload, error) {
	if slo.SLI.Raw != nil {
		return nil, fmt.Errorf("raw-ratio SLIs are not simulated: the query yields a ratio with no event counts to synthesize")
	}
	if shape.Pods < 1 {
		shape.Pods = 1
	}
	if shape.Models < 1 {
		shape.Models = 1
	}
	if slo.SLI.Threshold != nil {
		return build(slo, shape, thresholdSeries)
	}
	if slo.Inference != nil && slo.Inference.Role == model.SLIGoodput {
		return build(slo, shape, goodputSeries)
	}
	if slo.Inference != nil {
		w, err := build(slo, shape, engineSeries)
		if err == nil {
			return w, nil
		}
		// The engine's own shapes do not fit these queries (an engine whose
		// errors live on a label of the histogram, say): derive the series
		// from the selectors instead, as for a plain ratio.
		if w, err2 := build(slo, shape, ratioSeries); err2 == nil {
			return w, nil
		}
		return nil, err
	}
	return build(slo, shape, ratioSeries)
}

func build(slo model.SLO, shape Shape, shapes func(model.SLO) ([]Series, error)) (*Workload, error) {
	proto, err := shapes(slo)
	if err != nil {
		return nil, err
	}
	w := &Workload{Pods: shape.Pods}
	others, err := otherModels(slo, shape.Models-1)
	if err != nil {
		return nil, err
	}
	for pod := 0; pod < shape.Pods; pod++ {
		for _, variant := range append([]map[string]string{nil}, others...) {
			for _, s := range proto {
				b := labels.NewBuilder(s.Labels)
				for k, v := range variant {
					b.Set(k, v)
				}
				b.Set("pod", fmt.Sprintf("sim-%d", pod))
				c := s
				c.Labels, c.Pod = b.Labels(), pod
				w.Series = append(w.Series, c)
			}
		}
	}
	if err := w.check(slo); err != nil {
		return nil, err
	}
	return w, nil
}

// engineSeries builds one pod's engine series: the SLI's histogram and the
// finished-requests counter. For a latency SLI, k counts slow requests (all
// requests finish normally); for the errors SLI, k counts failed requests
// (all fast).
func engineSeries(slo model.SLO) ([]Series, error) {
	inf := slo.Inference
	sel, err := query.NewParser().ParseMetricSelector("{" + inf.Selector + "}")
	if inf.Selector == "" {
		sel, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("engine selector %q: %w", inf.Selector, err)
	}
	base, err := Satisfying(sel)
	if err != nil {
		return nil, fmt.Errorf("engine selector %q: %w", inf.Selector, err)
	}
	latency := inf.Role != "errors"
	var out []Series
	add := func(name string, extra map[string]string, n, k float64) {
		b := labels.NewBuilder(labels.EmptyLabels())
		for l, v := range base {
			b.Set(l, v)
		}
		for l, v := range extra {
			b.Set(l, v)
		}
		b.Set(query.MetricNameLabel, name)
		out = append(out, Series{Labels: b.Labels(), CoefN: n, coefK: k})
	}
	if h := inf.Histogram; h != "" && inf.Native {
		good, bad := nativeObservations(inf.NativeThreshold().Float(), inf.NativeSchema)
		b := labels.NewBuilder(labels.FromMap(base))
		b.Set(query.MetricNameLabel, h)
		out = append(out, Series{Labels: b.Labels(), schema: inf.NativeSchema,
			hist: []observation{{value: good, coefN: 1, coefK: -1}, {value: bad, coefK: 1}}})
	} else if h := inf.Histogram; h != "" && len(inf.Buckets) > 0 {
		threshold := inf.NativeThreshold().Float()
		buckets := append([]float64(nil), inf.Buckets...)
		sort.Float64s(buckets)
		good, bad := observations(buckets, threshold, latency)
		for _, le := range buckets {
			n, k := 0.0, 0.0
			for _, g := range good {
				if g.value <= le {
					n, k = n+g.share, k-g.share
				}
			}
			if latency && bad <= le {
				n, k = 1, 0
			}
			add(h+"_bucket", map[string]string{"le": labels.FormatOpenMetricsFloat(le)}, n, k)
		}
		// A latency histogram observes every request; with the errors SLI
		// only the successful ones reach it.
		obsK := 0.0
		if !latency {
			obsK = -1
		}
		add(h+"_bucket", map[string]string{"le": "+Inf"}, 1, obsK)
		add(h+"_count", nil, 1, obsK)
		mean := 0.0
		for _, g := range good {
			mean += g.share * g.value
		}
		if latency {
			add(h+"_sum", nil, mean, bad-mean)
		} else {
			add(h+"_sum", nil, mean, -mean)
		}
	}
	// The finished-requests counter by finished_reason is vLLM's shape;
	// a request count written as a sum of counters is left to ratioSeries.
	if r := inf.Signals.Requests; r != "" && query.ValidMetricName(r) {
		if latency {
			add(r, map[string]string{"finished_reason": "stop"}, 1, 0)
			add(r, map[string]string{"finished_reason": "error"}, 0, 0)
		} else if rej := rejections(slo, r); rej != "" {
			// The engine counts requests it refused at admission apart from
			// finished ones (vLLM's admission rejections, HTTP 503): the
			// failures are those, so the SLI must count them.
			add(r, map[string]string{"finished_reason": "stop"}, 1, -1)
			add(r, map[string]string{"finished_reason": "error"}, 0, 0)
			add(rej, map[string]string{"reason": "max_num_queued_reqs"}, 0, 1)
		} else {
			add(r, map[string]string{"finished_reason": "stop"}, 1, -1)
			add(r, map[string]string{"finished_reason": "error"}, 0, 1)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("engine %s names neither a histogram nor a request counter for SLI %s", inf.Engine, inf.Role)
	}
	return out, nil
}

// spreadMedian and spreadSigma shape the good requests' latencies: a
// lognormal with its median at a quarter of the threshold, as served
// traffic looks (most requests well under the objective, a tail towards it),
// so percentiles drawn from the synthetic histogram sit apart instead of
// all on the threshold's bucket boundary.
const (
	spreadMedian = 0.25
	spreadSigma  = 0.8
)

// goodShare is the share of the good requests observed at one latency.
type goodShare struct {
	value, share float64
}

// observations picks the latencies of good requests, spread over every
// bucket up to the threshold (each at the middle of its bucket, with the
// lognormal's share of it), and of a slow request: the middle of the bucket
// just above the threshold. Every good observation lands at or under the
// threshold and the slow one above it, whatever the bucket layout, so the
// SLI reads exactly the scenario's bad share.
func observations(buckets []float64, threshold float64, latency bool) (good []goodShare, bad float64) {
	if !latency || threshold == 0 {
		return []goodShare{{buckets[0] / 2, 1}}, buckets[0] / 2
	}
	upper := threshold * 2
	bounds := []float64{}
	for _, b := range buckets {
		if b < threshold {
			bounds = append(bounds, b)
		}
		if b > threshold {
			upper = b
			break
		}
	}
	bounds = append(bounds, threshold)
	cdf := func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return 0.5 * math.Erfc(-math.Log(x/(spreadMedian*threshold))/(spreadSigma*math.Sqrt2))
	}
	total := cdf(threshold)
	lo := 0.0
	for _, hi := range bounds {
		if share := (cdf(hi) - cdf(lo)) / total; share > 0 {
			good = append(good, goodShare{(lo + hi) / 2, share})
		}
		lo = hi
	}
	return good, (threshold + upper) / 2
}

// nativeObservations picks the latency of a good and of a slow request for
// a native histogram: inside the buckets of the schema just below and just
// above the threshold's own, so histogram_fraction never interpolates over
// them, whether the threshold is a boundary or not.
func nativeObservations(threshold float64, schema int) (good, bad float64) {
	lower, upper, boundary := model.NativeBucket(threshold, schema)
	step := upper / lower
	if boundary {
		// The threshold's bucket is (lower, threshold]: all good.
		return math.Sqrt(lower * upper), upper * math.Sqrt(step)
	}
	return lower / math.Sqrt(step), upper * math.Sqrt(step)
}

// check evaluates the SLI's selectors over the synthetic series, as linear
// forms in n and k, and insists on total = n and bad = k (up to a common
// positive factor, which is how many selectors match a series).
func (w *Workload) check(slo model.SLO) error {
	if slo.SLI.Threshold != nil {
		// A percentile is no linear form; the scenarios prove its slices.
		return nil
	}
	if slo.SLI.Total == nil {
		return fmt.Errorf("the SLI has no total query")
	}
	totalN, totalK, err := w.form(slo.SLI.Total.Expr)
	if err != nil {
		return err
	}
	var badN, badK float64
	switch {
	case slo.SLI.Bad != nil:
		badN, badK, err = w.form(slo.SLI.Bad.Expr)
	case slo.SLI.Good != nil:
		var gN, gK float64
		gN, gK, err = w.form(slo.SLI.Good.Expr)
		badN, badK = totalN-gN, totalK-gK
	default:
		err = fmt.Errorf("the SLI has neither good nor bad events")
	}
	if err != nil {
		return err
	}
	ok := totalN > 0 && near(totalK, 0) && near(badN, 0) && near(badK, totalN)
	if !ok {
		return fmt.Errorf("the synthetic %s series do not drive the SLI as intended (total = %gn%+gk, bad = %gn%+gk per pod); the SLI queries select series the simulator does not model",
			engineName(slo), totalN, totalK, badN, badK)
	}
	return nil
}

func engineName(slo model.SLO) string {
	if slo.Inference != nil {
		return slo.Inference.Engine
	}
	return "ratio"
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// form is the linear form of a query over one pod's series.
func (w *Workload) form(query string) (n, k float64, err error) {
	sels, err := selectorsOf(query)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range w.Series {
		if s.Pod != 0 {
			continue
		}
		for _, sel := range sels {
			sn, sk := sel.count(s)
			n += sn
			k += sk
		}
	}
	return n, k, nil
}

// histogram is a native histogram series' value after n requests and k bad
// ones: one span of buckets from its lowest observation's to its highest,
// every one present from the start, as a scrape of a long-running
// histogram has them.
func (s Series) histogram(n, k float64) *histogram.Histogram {
	h := &histogram.Histogram{Schema: int32(s.schema), ZeroThreshold: zeroThreshold}
	index := func(v float64) int {
		_, upper, _ := model.NativeBucket(v, s.schema)
		return int(math.Round(math.Log2(upper) * math.Exp2(float64(s.schema))))
	}
	first, last := index(s.hist[0].value), index(s.hist[0].value)
	for _, o := range s.hist {
		first, last = min(first, index(o.value)), max(last, index(o.value))
	}
	counts := make([]int64, last-first+1)
	for _, o := range s.hist {
		c := int64(math.Round(o.coefN*n + o.coefK*k))
		counts[index(o.value)-first] += c
		h.Count += uint64(c)
		h.Sum += float64(c) * o.value
	}
	h.PositiveSpans = []histogram.Span{{Offset: int32(first), Length: uint32(len(counts))}}
	prev := int64(0)
	for _, c := range counts {
		h.PositiveBuckets = append(h.PositiveBuckets, c-prev)
		prev = c
	}
	return h
}

// Sample is the series' value after n requests and k bad ones: a float,
// or a native histogram when the series is one (h is then non-nil).
func (s Series) Sample(n, k float64) (v float64, h *histogram.Histogram) {
	if s.hist != nil {
		return 0, s.histogram(n, k)
	}
	return s.CoefN*n + s.coefK*k, nil
}

// zeroThreshold is client_golang's default zero bucket width (2^-128).
const zeroThreshold = 2.938735877055719e-39

// countedQuery is the query whose series every event reaches: the total,
// or a threshold SLI's histogram; empty for a raw ratio.
func countedQuery(slo model.SLO) string {
	switch {
	case slo.SLI.Total != nil:
		return slo.SLI.Total.Expr
	case slo.SLI.Threshold != nil:
		return slo.SLI.Threshold.Query.Expr
	}
	return ""
}
