package spec

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/OpenSLO/go-sdk/pkg/openslo"
	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/spec/engine"
)

// Defaults of the shorthand, also used for plain OpenSLO without annotations.
const (
	DefaultScrapeInterval = model.DefaultScrapeInterval
	DefaultEvaluation     = time.Minute
	// DefaultBatchWindow is the SLO window of a batch shorthand spec that
	// names none: a quarter, over which batch work is planned and judged.
	DefaultBatchWindow = "90d"
	// DefaultBatchCalendarWindow is the same for a calendar window: the
	// calendar quarter.
	DefaultBatchCalendarWindow = "1Q"
)

// expanded is an OpenSLO object made from a shorthand document, with the
// map from its property paths back to the shorthand's.
type expanded struct {
	obj     openslo.Object
	mapPath func(string) string
	ext     *Extensions // an SLO's facts, typed
}

// expand checks a shorthand document and turns it into OpenSLO v1 objects:
// one Service and one SLO per objective.
func expand(d *doc, s *Shorthand, cat *engine.Catalog) ([]expanded, Problems) {
	var ps Problems
	if s.Metadata.Name == "" {
		ps = append(ps, d.errorf("metadata.name", "required: the name of this document, a DNS label such as %q", "chat"))
	} else if !isDNSLabel(s.Metadata.Name) {
		ps = append(ps, d.errorf("metadata.name", "%q is not a DNS label (lower-case letters, digits and '-', at most 63)", s.Metadata.Name))
	}
	if s.Spec.Service != "" && !isDNSLabel(s.Spec.Service) {
		ps = append(ps, d.errorf("spec.service", "%q is not a DNS label (lower-case letters, digits and '-', at most 63)", s.Spec.Service))
	}
	var eng *engine.Engine
	var custom string
	if s.Spec.Metrics != nil {
		if _, builtin := cat.Engine(s.Spec.Engine); builtin {
			ps = append(ps, d.errorf("spec.engine", "%q is a catalog engine; name the engine your metrics describe differently", s.Spec.Engine))
		} else if !isDNSLabel(s.Spec.Engine) {
			ps = append(ps, d.errorf("spec.engine", "required with spec.metrics: a name for these metrics, a DNS label such as %q", "app"))
		} else if e, err := engine.Custom(s.Spec.Engine, s.Spec.Metrics); err != nil {
			ps = append(ps, d.errorf("spec.metrics", "%v", err))
		} else if text, err := e.Marshal(); err != nil {
			ps = append(ps, d.errorf("spec.metrics", "%v", err))
		} else {
			eng, custom = e, text
		}
	} else if _, ok := cat.Engine(s.Spec.Engine); !ok {
		if s.Spec.Engine == "" {
			ps = append(ps, d.errorf("spec.engine", "required: one of %s", fmtList(cat.IDs())))
		} else {
			ps = append(ps, d.errorf("spec.engine", "unknown engine %q; known engines: %s", s.Spec.Engine, fmtList(cat.IDs())))
		}
	} else if e, _ := cat.Engine(s.Spec.Engine); e.NoMetrics != "" {
		ps = append(ps, d.errorf("spec.engine", "%s", e.NoMetrics))
	} else if e, err := cat.Resolve(s.Spec.Engine, s.Spec.EngineVersion); err != nil {
		ps = append(ps, d.errorf("spec.engineVersion", "%v", err))
	} else {
		eng = e
	}
	if s.Spec.Tier != "" {
		if msg := tierProblem(s.Spec.Tier); msg != "" {
			ps = append(ps, d.errorf("spec.tier", "%s", msg))
		}
	}
	batch := s.Spec.Tier == model.SLOTierBatch
	if s.Spec.Window == "" && batch {
		// The tier's default, on a copy: the document stays as written.
		c := *s
		c.Spec.Window = DefaultBatchWindow
		if c.Spec.Calendar != nil {
			c.Spec.Window = DefaultBatchCalendarWindow
		}
		s = &c
	}
	if s.Spec.Window == "" {
		ps = append(ps, d.errorf("spec.window", "required: the rolling SLO window, from 1d to 90d, such as 28d"))
	} else if _, _, err := parseOpenSLODuration(s.Spec.Window); err != nil {
		ps = append(ps, d.errorf("spec.window", "%q is not a window: write a whole number and a unit m, h, d or w, such as 28d", s.Spec.Window))
	}
	ps = append(ps, checkSelector(d, "spec.selector", s.Spec.Selector)...)
	ps = append(ps, shorthandText(d, s)...)
	scrape := durationOr(d, &ps, "spec.scrapeInterval", s.Spec.ScrapeInterval, DefaultScrapeInterval)
	evaluation := durationOr(d, &ps, "spec.evaluationInterval", s.Spec.EvaluationInterval, DefaultEvaluation)
	denominator := s.Spec.TTFTDenominator
	switch denominator {
	case "":
		denominator = "histogram"
	case "histogram", "requests":
	default:
		ps = append(ps, d.errorf("spec.ttftDenominator", "%q is not valid: histogram (pair TTFT with an errors objective) or requests (failed requests count as slow)", denominator))
	}
	if len(s.Spec.Objectives) == 0 {
		ps = append(ps, d.errorf("spec.objectives", "required: at least one objective, such as {sli: ttft, threshold: 500ms, target: %s}", "99%"))
	}
	if eng == nil {
		return nil, ps
	}
	eng, histType := histogramType(d, &ps, s, eng)
	var buckets map[string][]float64
	if eng != nil && len(s.Spec.Buckets) > 0 {
		// Notes about fixed buckets are reported where the SLO is resolved,
		// once per SLO.
		e, _, err := eng.WithBuckets(s.Spec.Buckets)
		if err != nil {
			ps = append(ps, d.errorf("spec.buckets", "%v", err))
		}
		eng, buckets = e, s.Spec.Buckets
	}
	if eng == nil {
		return nil, ps
	}

	service := s.serviceName()
	out := []expanded{{obj: v1.NewService(v1.Metadata{Name: service, DisplayName: s.Metadata.DisplayName},
		v1.ServiceSpec{Description: s.Spec.Description}), mapPath: func(string) string { return "spec.service" }}}
	names := map[string]int{}
	hasErrors, hasTTFT := false, false
	for _, o := range s.Spec.Objectives {
		hasErrors = hasErrors || o.SLI == "errors"
		hasTTFT = hasTTFT || o.SLI == "ttft"
	}
	for i, o := range s.Spec.Objectives {
		path := fmt.Sprintf("spec.objectives[%d]", i)
		ps = append(ps, checkSelector(d, path+".selector", o.Selector)...)
		sel := mergeSelector(s.Spec.Selector, o.Selector)
		expandOne := expandObjective
		if o.SLI == model.SLIGoodput {
			expandOne = expandGoodput
		}
		slo, ext, oPs := expandOne(d, s, o, path, eng, sel, denominator)
		ps = append(ps, oPs...)
		if slo == nil {
			continue
		}
		if j, dup := names[slo.Metadata.Name]; dup {
			ps = append(ps, d.errorf(path, "two objectives are named %q (the other is spec.objectives[%d]); set name on one of them", slo.Metadata.Name, j))
			continue
		}
		names[slo.Metadata.Name] = i
		if o.SLI == "ttft" && denominator == "histogram" && !hasErrors {
			ps = append(ps, d.warnf(path, "TTFT is only observed for requests that produced a first token, so failed requests are invisible to it; add an errors objective, or set spec.ttftDenominator: requests"))
		}
		ext.Tier, ext.EngineVersion, ext.EngineMetrics = s.Spec.Tier, s.Spec.EngineVersion, custom
		ext.ScrapeInterval, ext.Evaluation = scrape, evaluation
		ext.Selector, ext.GroupBy = selectorText(sel), s.Spec.GroupBy
		ext.HistogramType, ext.Buckets, ext.NativeSchema = histType, buckets, s.Spec.NativeSchema
		ext.Autoscaling = s.Spec.Autoscaling
		// The backlog warning and load shedding are TTFT signals: they go
		// to the ttft objectives, or to every objective when there is none,
		// where validation names what is missing.
		expandSignals(s.Spec.Alerting, ext, o.SLI == "ttft" || !hasTTFT)
		ext.Maintenance = s.Spec.Alerting.Maintenance
		policies, aPs := expandAlerting(d, s, slo, ext, scrape, evaluation)
		ps = append(ps, aPs...)
		slo.Spec.AlertPolicies = policies
		ann, err := ext.annotations()
		if err != nil {
			ps = append(ps, d.errorf(objectivePaths(path)("metadata.annotations."+err.key), "cannot encode: %v", err.err))
		}
		slo.Metadata.Annotations = ann
		out = append(out, expanded{obj: *slo, mapPath: objectivePaths(path), ext: ext})
	}
	return out, ps
}

// countsRejections tells whether a spec has a rejections objective on the
// engine's own counters (a gateway's total or bad counts other series).
func countsRejections(s *Shorthand) bool {
	return slices.ContainsFunc(s.Spec.Objectives, func(o ShorthandObjective) bool {
		return o.SLI == "rejections" && o.Total == "" && o.Good == "" && o.Bad == ""
	})
}

// objectivePaths maps the paths of an expanded SLO to the shorthand's.
func objectivePaths(objective string) func(string) string {
	return func(p string) string {
		switch {
		case strings.HasPrefix(p, "spec.objectives[0]"):
			return objective + strings.TrimPrefix(p, "spec.objectives[0]")
		case strings.HasPrefix(p, "spec.timeWindow[0].calendar"):
			return "spec.calendar" + strings.TrimPrefix(p, "spec.timeWindow[0].calendar")
		case strings.HasPrefix(p, "spec.timeWindow"):
			return "spec.window"
		case strings.HasPrefix(p, "spec.alertPolicies"):
			return "spec.alerting"
		case strings.HasPrefix(p, "metadata.annotations"):
			if sp, ok := shorthandPath(p, objective); ok {
				return sp
			}
			return "spec"
		default:
			return objective
		}
	}
}

func expandObjective(d *doc, s *Shorthand, o ShorthandObjective, path string, eng *engine.Engine, selector map[string]string, denominator string) (*v1.SLO, *Extensions, Problems) {
	var ps Problems
	roles := eng.SLIs()
	defaulted := o.SLI == "" && o.Threshold != "" && s.Spec.Tier == model.SLOTierBatch
	if defaulted {
		// A job waits for the whole answer, not its first token.
		o.SLI = "e2e"
	}
	// An engine without an error counter still serves an errors SLI whose
	// bad events the objective takes from a gateway.
	counted := o.SLI == "errors" || engine.IsFailureKind(o.SLI)
	gateway := counted && (o.Bad != "" || o.Good != "")
	if !slices.Contains(roles, o.SLI) && !gateway {
		msg := fmt.Sprintf("%q is not an SLI: valid are %s", o.SLI, fmtList(shorthandSLIs()))
		switch {
		case o.SLI == "":
			msg = "required: one of " + fmtList(roles)
		case counted || slices.Contains(engine.Roles, o.SLI):
			msg = fmt.Sprintf("engine %s cannot measure %s: %s", engineName(eng), o.SLI, eng.Missing(o.SLI))
			if len(roles) > 0 {
				msg += "; it serves " + fmtList(roles)
			}
			if defaulted {
				msg = "a batch objective with a threshold and no sli measures end-to-end latency (e2e), but " + msg + "; set sli"
			}
		}
		return nil, nil, Problems{d.errorf(path+".sli", "%s", msg)}
	}
	target, err := model.ParseDecimal(o.Target)
	if o.Target == "" {
		ps = append(ps, d.errorf(path+".target", "required: the share of good events, such as %s or 0.99", "99%"))
	} else if err != nil {
		ps = append(ps, d.errorf(path+".target", "%q is not a target: write a percentage such as 99.9%% or a ratio such as 0.999", o.Target))
	} else if err := model.CheckObjective(target); err != nil {
		ps = append(ps, d.errorf(path+".target", "%v", err))
	}
	ext := &Extensions{Engine: eng.ID, SLI: o.SLI, ScaleOnBurn: o.ScaleOnBurn}
	var total, good, bad string
	if counted {
		if o.Threshold != "" {
			ps = append(ps, d.errorf(path+".threshold", "the %s SLI has no latency threshold; remove it", o.SLI))
		}
		total, bad = eng.Errors.Total, eng.Errors.Bad
		if f := eng.Failures[o.SLI]; f != nil {
			total, bad = f.Total, f.Bad
		} else if o.SLI != "errors" {
			total, bad = "", ""
		} else if r := eng.Failures["rejections"]; r != nil && countsRejections(s) {
			// A refused request is the rejections SLO's: the errors SLI
			// leaves it out, so a rejection storm pages once.
			bad, _ = query.Excluding(bad, r.Bad)
		}
		if total == "" && o.Total == "" {
			ps = append(ps, d.errorf(path+".total", "engine %s counts no requests for %s; set total (and bad) from the gateway", engineName(eng), o.SLI))
		}
	} else {
		h := eng.Histograms[o.SLI]
		seconds, ok := thresholdSeconds(d, &ps, path+".threshold", o.Threshold)
		if ok && eng.IsNative() {
			// The good count is the count under the threshold, interpolated
			// inside the bucket that holds it unless it is a boundary
			// (resolve warns then). Both are linear in the histogram, so
			// rated and summed they stay additive.
			hist := seriesSelector(h.Metric)
			bound := strconv.FormatFloat(seconds.Float()*h.Scale(), 'g', -1, 64)
			good = fmt.Sprintf("histogram_count(%s) * histogram_fraction(0, %s, %s)", hist, bound, hist)
			total = fmt.Sprintf("histogram_count(%s)", hist)
			ext.Threshold = o.Threshold
		} else if ok {
			b, exact := h.Bucket(seconds.Float())
			if !exact {
				ps = append(ps, d.errorf(path+".threshold", "%s is not a bucket boundary of %s, so the SLI could not be counted exactly; %s",
					o.Threshold, h.Metric, nearest(h, seconds.Float())))
			} else {
				// le is in the histogram's own unit: 500ms is le="500" on a
				// millisecond histogram.
				good = seriesSelector(h.Metric+"_bucket", "le", labels.FormatOpenMetricsFloat(b))
				total = seriesSelector(h.Metric + "_count")
				ext.Threshold = o.Threshold
			}
		}
		if o.SLI == "ttft" && denominator == "requests" {
			if eng.Requests == "" {
				ps = append(ps, d.errorf("spec.ttftDenominator", "engine %s has no request counter to take the TTFT total from; use histogram", engineName(eng)))
			}
			total = eng.Requests
			ext.TTFTDenominator = "requests"
		}
	}
	for _, q := range []struct {
		field, override string
		dst             *string
	}{{"total", o.Total, &total}, {"good", o.Good, &good}, {"bad", o.Bad, &bad}} {
		if q.override != "" {
			*q.dst = q.override
			if q.field == "good" {
				bad = ""
			}
			if q.field == "bad" {
				good = ""
			}
		}
		if *q.dst == "" {
			continue
		}
		sel, err := withSelector(*q.dst, selector)
		if err != nil {
			ps = append(ps, d.errorf(path+"."+q.field, "%v", err))
			continue
		}
		*q.dst = sel
	}
	if len(ps) > 0 {
		return nil, nil, ps
	}
	ratio := &v1.SLIRatioMetric{Counter: true, Total: promSource(total)}
	if bad != "" {
		ratio.Bad = promSource(bad)
	} else {
		ratio.Good = promSource(good)
	}
	name := o.sloName(s.Metadata.Name)
	window, _, _ := parseOpenSLODuration(s.Spec.Window)
	targetF := target.Float()
	slo := v1.NewSLO(v1.Metadata{Name: name, DisplayName: o.DisplayName}, v1.SLOSpec{
		Description: objectiveDescription(eng, o),
		Service:     s.serviceName(),
		Indicator: &v1.SLOIndicatorInline{
			Metadata: v1.Metadata{Name: name + "-sli"},
			Spec:     v1.SLISpec{RatioMetric: ratio},
		},
		BudgetingMethod: v1.SLOBudgetingMethodOccurrences,
		TimeWindow:      []v1.SLOTimeWindow{s.timeWindow(window)},
		Objectives:      []v1.SLOObjective{{DisplayName: o.DisplayName, Target: &targetF}},
	})
	return &slo, ext, nil
}

func objectiveDescription(eng *engine.Engine, o ShorthandObjective) string {
	if o.SLI == "errors" {
		return strings.TrimSpace(fmt.Sprintf("Share of %s requests that finish without error. %s", eng.Title, eng.Errors.Note))
	}
	if engine.IsFailureKind(o.SLI) {
		return failureDescription(eng, o.SLI)
	}
	h := eng.Histograms[o.SLI]
	desc := fmt.Sprintf("Share of %s %s observations at or under %s (%s", eng.Title, strings.ToUpper(o.SLI), o.Threshold, h.Metric)
	if h.Unit == engine.Milliseconds {
		desc += ", in milliseconds"
	}
	if eng.IsNative() {
		desc += ", a native histogram"
	}
	desc += ")."
	if h.Note != "" {
		desc += " " + strings.ToUpper(h.Note[:1]) + h.Note[1:] + "."
	}
	return desc
}

func promSource(query string) *v1.SLIMetricSpec {
	return &v1.SLIMetricSpec{MetricSource: v1.SLIMetricSource{Type: "Prometheus", Spec: map[string]any{"query": query}}}
}

// thresholdSeconds reads a latency threshold (250ms, 1.5s) as exact seconds.
func thresholdSeconds(d *doc, ps *Problems, path, s string) (model.Decimal, bool) {
	if s == "" {
		*ps = append(*ps, d.errorf(path, "required for a latency SLI: the latency bound, such as 250ms or 1.5s"))
		return model.Decimal{}, false
	}
	dur, err := time.ParseDuration(s)
	if err != nil || dur <= 0 {
		*ps = append(*ps, d.errorf(path, "%q is not a latency: write a duration such as 250ms or 1.5s", s))
		return model.Decimal{}, false
	}
	return model.NewDecimal(int64(dur), int64(time.Second)), true
}

// nearest names the bucket bounds around a threshold, stricter one first.
func nearest(h *engine.Histogram, seconds float64) string {
	below, above := h.Neighbours(seconds)
	var opts []string
	if !math.IsNaN(below) {
		opts = append(opts, fmt.Sprintf("%s (stricter)", secondsText(below)))
	}
	if !math.IsNaN(above) {
		opts = append(opts, fmt.Sprintf("%s (looser)", secondsText(above)))
	}
	if len(opts) == 0 {
		return "the histogram has no buckets"
	}
	out := "the nearest buckets are " + strings.Join(opts, " and ")
	if h.Unit == engine.Milliseconds {
		var les []string
		for _, b := range []float64{below, above} {
			if !math.IsNaN(b) {
				les = append(les, fmt.Sprintf("le=%q", labels.FormatOpenMetricsFloat(b*h.Scale())))
			}
		}
		out += fmt.Sprintf(" (%s: the histogram counts milliseconds)", strings.Join(les, " and "))
	}
	return out
}

// secondsText prints seconds as the shortest duration (0.25 -> 250ms).
func secondsText(s float64) string {
	return time.Duration(math.Round(s * float64(time.Second))).String()
}

func engineName(e *engine.Engine) string {
	if e.Variant != "" {
		return e.ID + " " + e.Variant
	}
	return e.ID
}

func durationOr(d *doc, ps *Problems, path, s string, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	v, err := model.ParseDuration(s)
	if err != nil || v <= 0 {
		*ps = append(*ps, d.errorf(path, "%q is not a duration such as 30s or 1m", s))
		return def
	}
	return v
}

// shorthandText checks the shorthand's free-text fields with the same rules
// as OpenSLO's, at the shorthand's own paths.
func shorthandText(d *doc, s *Shorthand) Problems {
	var ps Problems
	text := func(path, v string, kind textKind) {
		if msg := textProblem(v, kind); msg != "" {
			ps = append(ps, d.errorf(path, "%s", msg))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Metadata.Annotations)) {
		if strings.HasPrefix(k, annotationPrefix) {
			ps = append(ps, d.errorf("metadata.annotations."+k, "unknown annotation %q: the shorthand writes inferslo.dev/* annotations itself; set the matching spec field instead", k))
		}
	}
	text("metadata.displayName", s.Metadata.DisplayName, oneLine)
	text("spec.description", s.Spec.Description, prose)
	for i, o := range s.Spec.Objectives {
		path := fmt.Sprintf("spec.objectives[%d]", i)
		if o.Name != "" {
			if msg := dnsLabelProblem(o.Name); msg != "" {
				ps = append(ps, d.errorf(path+".name", "%s", msg))
			}
		}
		text(path+".displayName", o.DisplayName, oneLine)
	}
	if u := s.Spec.Alerting.RunbookURL; u != "" {
		if msg := runbookProblem(u); msg != "" {
			ps = append(ps, d.errorf("spec.alerting.runbookURL", "%s", msg))
		}
	}
	return ps
}

// histogramType reads the spec's histogramType and nativeSchema against the
// engine's default, and returns the engine as scraped (native: _count
// queries read histogram_count) with the type to record, empty when it is
// the classic default.
func histogramType(d *doc, ps *Problems, s *Shorthand, eng *engine.Engine) (*engine.Engine, string) {
	t := s.Spec.HistogramType
	valid := true
	switch t {
	case "":
		t = eng.HistogramType
	case engine.Classic, engine.Native:
	default:
		*ps = append(*ps, d.errorf("spec.histogramType", "%q is not valid: classic (le buckets) or native (exponential buckets, as OpenTelemetry exponential histograms arrive)", t))
		valid = false
	}
	if n := s.Spec.NativeSchema; n != nil {
		switch {
		case *n < model.MinNativeSchema || *n > model.MaxNativeSchema:
			*ps = append(*ps, d.errorf("spec.nativeSchema", "%d is not a native histogram schema: valid are %d to %d", *n, model.MinNativeSchema, model.MaxNativeSchema))
		case valid && t != engine.Native:
			*ps = append(*ps, d.errorf("spec.nativeSchema", "belongs to native histograms; set histogramType: native or remove it"))
		}
	}
	if !valid {
		return eng, ""
	}
	out, err := eng.As(t)
	if err != nil {
		*ps = append(*ps, d.errorf("spec.histogramType", "%v", err))
		return nil, ""
	}
	if t == engine.Classic && !eng.IsNative() {
		t = ""
	}
	return out, t
}
