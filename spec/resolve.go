package spec

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
	"github.com/inferslo/inferslo/spec/querybound"
)

const (
	minWindow = 24 * time.Hour
	maxWindow = 90 * 24 * time.Hour
)

// resolve turns every SLO object into model SLOs, one per objective. The
// objects resolve on every core; the caller's checks, which may count what
// they have seen, then run on each SLO in input order.
func (l *loader) resolve() model.Set {
	var set model.Set
	names := map[string]object[v1.SLO]{}
	resolved := make([]resolution, len(l.slos))
	eachIndex(len(l.slos), func(i int) { resolved[i] = l.resolveSLO(l.slos[i]) })
	for i, o := range l.slos {
		slos, ps := l.check(o, resolved[i])
		resolved[i] = resolution{}
		l.problems = append(l.problems, ps...)
		if len(ps.Errors()) > 0 {
			continue
		}
		for _, s := range slos {
			if prev, dup := names[s.Name]; dup {
				l.problems = append(l.problems, o.errorf("metadata.name", "SLO name %q is already used by the SLO at %s; names must be unique across all specs", s.Name, location(prev.d)))
				continue
			}
			names[s.Name] = o
			set.SLOs = append(set.SLOs, s)
		}
	}
	set.Sort()
	l.problems = append(l.problems, planProblems(set, names)...)
	l.problems = append(l.problems, sharedSeriesProblems(set, names)...)
	return set
}

// resolution is an SLO object resolved but for the caller's checks.
type resolution struct {
	// slos are its objectives' SLOs, each with where in ps the problems
	// of its checks go.
	slos []checkAt
	ps   Problems
	// drop: no SLO is kept, whatever the checks find.
	drop bool
}

type checkAt struct {
	slo model.SLO
	at  int
}

// resolveSLO resolves one SLO object, but for the caller's checks; it
// reads the loader only, so objects resolve in parallel.
func (l *loader) resolveSLO(o object[v1.SLO]) resolution {
	// text holds unsafe strings; they do not stop the checks that follow,
	// so one run reports every problem.
	var ps, text Problems
	spec := o.v.Spec
	if o.ext == nil {
		o.ext = decodeExtensions(o.v.Metadata.Annotations)
	}
	ext := o.ext
	checkAnnotations(o, &text)
	if msg := dnsLabelProblem(o.v.Metadata.Name); msg != "" {
		text = append(text, o.errorf("metadata.name", "%s", msg))
	}
	if msg := dnsLabelProblem(spec.Service); msg != "" {
		text = append(text, o.errorf("spec.service", "%s", msg))
	}
	checkText(o, &text, "metadata.displayName", o.v.Metadata.DisplayName, oneLine)
	checkText(o, &text, "spec.description", spec.Description, prose)
	base := model.SLO{
		DisplayName: o.v.Metadata.DisplayName,
		Description: spec.Description,
		Service:     model.Service{Name: spec.Service},
		Source:      o.d.file,
		Budgeting:   string(spec.BudgetingMethod),
	}
	if svc, ok := l.services[spec.Service]; ok {
		base.Service.DisplayName = svc.v.Metadata.DisplayName
		base.Service.Description = svc.v.Spec.Description
		checkText(svc, &text, "metadata.displayName", svc.v.Metadata.DisplayName, oneLine)
		checkText(svc, &text, "spec.description", svc.v.Spec.Description, prose)
	}
	switch spec.BudgetingMethod {
	case v1.SLOBudgetingMethodOccurrences, v1.SLOBudgetingMethodTimeslices, v1.SLOBudgetingMethodRatioTimeslices:
	default:
		ps = append(ps, o.errorf("spec.budgetingMethod", "%q is not a budgeting method; valid: Occurrences, Timeslices, RatioTimeslices", spec.BudgetingMethod))
	}
	if len(spec.TimeWindow) == 1 {
		tw := spec.TimeWindow[0]
		switch {
		case tw.Calendar != nil || !tw.IsRolling:
			if base.Calendar = calendarWindow(o, tw, &ps); base.Calendar != nil {
				base.Window = base.Calendar.Nominal()
			}
		default:
			w, ok := openSLODuration(tw.Duration)
			base.Window = w
			if !ok {
				ps = append(ps, o.errorf("spec.timeWindow[0].duration", "%q is not a window: write a whole number and a unit d or w, such as 28d", tw.Duration))
			} else if base.Window < minWindow || base.Window > maxWindow {
				ps = append(ps, o.errorf("spec.timeWindow[0].duration", "%s is outside the supported range of rolling windows, 1d to 90d", tw.Duration))
			}
		}
	}
	base.ScrapeInterval = durationFact(o, &ps, AnnotationScrapeInterval, ext.ScrapeInterval, DefaultScrapeInterval)
	base.Evaluation = durationFact(o, &ps, AnnotationEvaluation, ext.Evaluation, DefaultEvaluation)
	if base.ScrapeInterval < time.Second {
		ps = append(ps, o.errorf("metadata.annotations."+AnnotationScrapeInterval, "%s is below 1s; Prometheus scrapes at most once a second", base.ScrapeInterval))
	}
	if base.Evaluation < time.Second {
		ps = append(ps, o.errorf("metadata.annotations."+AnnotationEvaluation, "%s is below 1s; rule groups evaluate at most once a second", base.Evaluation))
	}

	sli, sliObj := l.indicator(o, &ps)
	if sliObj != nil {
		sliSpec := sli
		base.SLI = l.ratio(*sliObj, sliSpec, &ps)
	}
	base.GroupBy = groupBy(o, base.SLI, &ps)
	base.Inference = l.inference(o, &ps)
	if inf := base.Inference; inf != nil && ext.Selector == "" && base.SLI.Total != nil {
		inf.Selector, inf.SelectorLabels = l.engineSelector(inf.Engine, base.SLI.Total.Expr)
	}
	if ext.Engine == "" && sliObj != nil {
		base.Inference = l.inferEngine(*sliObj, &base, &ps)
	}
	base.SLOTier = sloTier(o, &ps)
	// A batch burn is work that can wait: replicas bought for it would
	// serve no one waiting, so only a spec that asks scales on it.
	base.ScaleOnBurn = base.Inference != nil && engine.IsLatency(base.Inference.Role) && !base.Batch()
	if !extensionProblem(o, AnnotationScaleOnBurn, &ps) && ext.ScaleOnBurn != nil {
		base.ScaleOnBurn = *ext.ScaleOnBurn
	}
	base.Autoscaling = autoscaling(o, &ps, base.GroupBy)
	checkEngineQueries(o, &base, &ps)
	// Objectives and alert policies are checked even when the indicator
	// failed, so one run reports every problem; only a window they depend
	// on stops them.
	blocked := len(ps.Errors()) > 0
	if blocked && (base.Window < minWindow || base.Window > maxWindow) {
		return resolution{ps: append(ps, text...), drop: true}
	}

	var out []checkAt
	for i, obj := range spec.Objectives {
		path := fmt.Sprintf("spec.objectives[%d]", i)
		s := base
		s.Name = o.v.Metadata.Name
		if len(spec.Objectives) > 1 {
			s.Name = fmt.Sprintf("%s-%s", s.Name, objectiveSuffix(obj, i))
		}
		if obj.Indicator != nil || obj.IndicatorRef != nil {
			ps = append(ps, o.errorf(path, "composite objectives are not supported yet; give each objective its own SLO"))
			continue
		}
		if !readTimeslices(o, sliObj, obj, path, &s, &ps) {
			continue
		}
		switch {
		case obj.Target != nil:
			s.Objective = model.DecimalFromFloat(*obj.Target)
		case obj.TargetPercent != nil:
			s.Objective = model.DecimalFromFloat(*obj.TargetPercent).Quo(model.NewDecimal(100, 1))
		}
		if err := model.CheckObjective(s.Objective); err != nil {
			ps = append(ps, o.errorf(path+".target", "%v", err))
			continue
		}
		if obj.DisplayName != "" {
			s.DisplayName = obj.DisplayName
			if msg := textProblem(obj.DisplayName, oneLine); msg != "" {
				ps = append(ps, o.errorf(path+".displayName", "%s", msg))
				continue
			}
		}
		alerting, aPs := l.alerting(o, s)
		signals(o, s, &alerting, &aPs)
		maintenanceWindows(o, s, &alerting, &aPs)
		ps = append(ps, aPs...)
		s.Alerting = alerting
		// A rule group evaluated less often than the base window would skip
		// whole windows of events.
		if bw := s.BaseWindow(); s.Evaluation > bw && len(aPs.Errors()) == 0 {
			ps = append(ps, o.errorf("metadata.annotations."+AnnotationEvaluation, "%s is longer than the base window %s of SLO %s; valid: 1s to %s", model.FormatDuration(s.Evaluation), model.FormatDuration(bw), s.Name, model.FormatDuration(bw)))
			continue
		}
		out = append(out, checkAt{s, len(ps)})
	}
	if blocked || len(text) > 0 {
		return resolution{slos: out, ps: append(ps, text...), drop: true}
	}
	return resolution{slos: out, ps: ps}
}

// objectiveSuffix names one of several objectives: its display name as a
// DNS label when it has one (stable when objectives are reordered), else
// its index.
func objectiveSuffix(obj v1.SLOObjective, i int) string {
	var b strings.Builder
	for _, c := range strings.ToLower(obj.DisplayName) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	if s := strings.Trim(b.String(), "-"); s != "" {
		return s
	}
	return fmt.Sprint(i)
}

// checkAnnotations checks the text of every inferslo.dev annotation as the
// table says, and refuses keys it does not know.
func checkAnnotations(o object[v1.SLO], text *Problems) {
	ann := o.v.Metadata.Annotations
	rows := map[string]extension{}
	var known []string
	for _, x := range extensionTable() {
		rows[x.key] = x
		known = append(known, x.key)
	}
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		if !strings.HasPrefix(k, annotationPrefix) {
			continue
		}
		path := "metadata.annotations." + k
		x, ok := rows[k]
		if !ok {
			*text = append(*text, o.errorf(path, "unknown annotation %q%s; inferslo reads %s", k, didYouMean(k, known), fmtList(known)))
			continue
		}
		check := x.text
		if check == nil {
			check = oneLineText
		}
		if msg := check(ann[k]); msg != "" {
			*text = append(*text, o.errorf(path, "%s", msg))
		}
	}
}

// durationFact is a duration fact, def when not given or not a duration.
func durationFact(o object[v1.SLO], ps *Problems, key string, d, def time.Duration) time.Duration {
	if extensionProblem(o, key, ps) || d == 0 {
		return def
	}
	return d
}

// check runs the caller's checks on each SLO of a resolution, their
// problems placed where resolveSLO met the SLO, and returns the SLOs they
// pass (none when the resolution drops them) and every problem.
func (l *loader) check(o object[v1.SLO], r resolution) ([]model.SLO, Problems) {
	var out []model.SLO
	var ps Problems
	last := 0
	for _, c := range r.slos {
		ps = append(ps, r.ps[last:c.at]...)
		last = c.at
		var checked Problems
		for _, check := range l.checks {
			for _, f := range check(c.slo) {
				if f.Severity == Warning {
					checked = append(checked, o.warnf(f.Path, "%s", f.Message))
				} else {
					checked = append(checked, o.errorf(f.Path, "%s", f.Message))
				}
			}
		}
		ps = append(ps, checked...)
		if len(checked.Errors()) == 0 {
			out = append(out, c.slo)
		}
	}
	ps = append(ps, r.ps[last:]...)
	if r.drop {
		return nil, ps
	}
	return out, ps
}

func (l *loader) indicator(o object[v1.SLO], ps *Problems) (v1.SLISpec, *object[v1.SLI]) {
	spec := o.v.Spec
	if spec.Indicator != nil {
		return spec.Indicator.Spec, &object[v1.SLI]{v: v1.SLI{Metadata: spec.Indicator.Metadata, Spec: spec.Indicator.Spec}, d: o.d,
			mapPath: func(p string) string { return o.mapPath("spec.indicator." + p) }}
	}
	if spec.IndicatorRef != nil {
		sli, ok := l.slis[*spec.IndicatorRef]
		if !ok {
			*ps = append(*ps, o.errorf("spec.indicatorRef", "%s", l.noObject("SLI", "SLIs", *spec.IndicatorRef, keysOf(l.slis))))
			return v1.SLISpec{}, nil
		}
		return sli.v.Spec, &sli
	}
	*ps = append(*ps, o.errorf("spec", "the SLO has no indicator or indicatorRef"))
	return v1.SLISpec{}, nil
}

// ratio reads a ratioMetric SLI with Prometheus sources.
func (l *loader) ratio(sli object[v1.SLI], spec v1.SLISpec, ps *Problems) model.SLI {
	if m := spec.ThresholdMetric; m != nil {
		// Op and value come with the objective, the query's shape is
		// checked against the objective's slice.
		q, ok := l.query(sli, "spec.thresholdMetric.metricSource", m.MetricSource, false, ps)
		if !ok {
			return model.SLI{}
		}
		return model.SLI{Threshold: &model.Threshold{Query: model.Query{Expr: q}}}
	}
	r := spec.RatioMetric
	if r == nil {
		*ps = append(*ps, sli.errorf("spec", "the SLI has no ratioMetric"))
		return model.SLI{}
	}
	out := model.SLI{Counter: r.Counter}
	read := func(field string, m *v1.SLIMetricSpec) *model.Query {
		if m == nil {
			return nil
		}
		q, ok := l.query(sli, "spec.ratioMetric."+field+".metricSource", m.MetricSource, r.Counter, ps)
		if !ok {
			return nil
		}
		return &model.Query{Expr: q}
	}
	out.Total = read("total", r.Total)
	out.Good = read("good", r.Good)
	out.Bad = read("bad", r.Bad)
	if r.Raw != nil {
		out.Raw = read("raw", r.Raw)
		out.RawType = string(r.RawType)
		out.Counter = false
		if r.Counter {
			*ps = append(*ps, sli.errorf("spec.ratioMetric.counter", "a raw ratio query is not a counter; set counter: false"))
		}
	}
	return out
}

// query reads a Prometheus query from an inline source or a DataSource;
// counter: one the rules rate.
func (l *loader) query(sli object[v1.SLI], path string, src v1.SLIMetricSource, counter bool, ps *Problems) (string, bool) {
	typ := src.Type
	if src.MetricSourceRef != "" {
		ds, ok := l.dataSources[src.MetricSourceRef]
		switch {
		case ok:
			typ = ds.v.Spec.Type
		case strings.EqualFold(typ, "prometheus"):
			// A DataSource holds how to connect, which the rules do not
			// need: the source's own type says what they are.
			*ps = append(*ps, sli.warnf(path+".metricSourceRef", "no DataSource named %q in the specs given; compiled as the Prometheus source its type says (a DataSource's connection details do not change the rules); known data sources: %s", src.MetricSourceRef, fmtList(keysOf(l.dataSources))))
		default:
			*ps = append(*ps, sli.errorf(path+".metricSourceRef", "no DataSource named %q in the specs given, and no type: Prometheus beside it; known data sources: %s", src.MetricSourceRef, fmtList(keysOf(l.dataSources))))
			return "", false
		}
	}
	if !strings.EqualFold(typ, "prometheus") {
		*ps = append(*ps, sli.errorf(path+".type", "data source type %q is not supported: inferslo compiles to Prometheus rules; use type: Prometheus", typ))
		return "", false
	}
	// OpenSLO leaves metricSource.spec free-form: other keys stay in the
	// spec (and in what export prints) but do not reach the rules.
	for _, k := range slices.Sorted(maps.Keys(src.Spec)) {
		if k != "query" {
			*ps = append(*ps, sli.warnf(path+".spec."+k, "kept but not used: inferslo reads only query from a Prometheus metric source, so %q does not change the rules", k))
		}
	}
	q, _ := src.Spec["query"].(string)
	if strings.TrimSpace(q) == "" {
		*ps = append(*ps, sli.errorf(path+".spec.query", "required: a PromQL query, such as sum(http_requests_total{job=\"api\"})"))
		return "", false
	}
	if msg := textProblem(q, prose); msg != "" {
		*ps = append(*ps, sli.errorf(path+".spec.query", "%s", msg))
		return "", false
	}
	if err := querybound.Check(q); err != nil {
		*ps = append(*ps, sli.errorf(path+".spec.query", "%v", err))
		return "", false
	}
	expr, err := query.NewParser().ParseExpr(q)
	if err != nil {
		*ps = append(*ps, sli.errorf(path+".spec.query", "invalid PromQL: %v", err))
		return "", false
	}
	normaliseLe(expr)
	q = expr.String()
	if counter {
		if err := query.CheckRate(q, expr); err != nil {
			*ps = append(*ps, sli.errorf(path+".spec.query", "%v", err))
			return "", false
		}
	}
	return q, true
}

// inference reads the engine facts the shorthand writes as annotations.
func (l *loader) inference(o object[v1.SLO], ps *Problems) *model.Inference {
	ext := o.ext
	id := ext.Engine
	if id == "" {
		return nil
	}
	var eng *engine.Engine
	if text := ext.EngineMetrics; text != "" {
		// A custom engine travels with the SLO, so plain OpenSLO exported
		// from the shorthand needs no catalog file.
		e, err := engine.ParseEngine(id, text)
		if err != nil {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationEngineMetrics, "%v", err))
			return nil
		}
		eng = e
	} else if _, ok := l.cat.Engine(id); !ok {
		*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationEngine, "unknown engine %q; known engines: %s", id, fmtList(l.cat.IDs())))
		return nil
	} else {
		e, err := l.cat.Resolve(id, ext.EngineVersion)
		if err != nil {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationEngineVersion, "%v", err))
			return nil
		}
		eng = e
	}
	eng = l.histogramType(o, eng, ps)
	if eng == nil {
		return nil
	}
	if extensionProblem(o, AnnotationBuckets, ps) {
		return nil
	}
	if buckets := ext.Buckets; buckets != nil {
		path := "metadata.annotations." + AnnotationBuckets
		e, notes, err := eng.WithBuckets(buckets)
		if err != nil {
			*ps = append(*ps, o.errorf(path, "%v", err))
			return nil
		}
		for _, n := range notes {
			*ps = append(*ps, o.warnf(path, "%s", n))
		}
		eng = e
	}
	role := ext.SLI
	inf := &model.Inference{Engine: eng.ID, EngineTitle: eng.Title, EngineVersion: eng.Variant, Role: role, Selector: ext.Selector}
	if role != "errors" && !engine.IsFailureKind(role) && role != model.SLIGoodput {
		h, ok := eng.Histograms[role]
		if !ok {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationSLI, "engine %s cannot measure %s: %s", engineName(eng), role, eng.Missing(role)))
			return nil
		}
		inf.Histogram, inf.Buckets, inf.Unit = h.Metric, h.Buckets, h.UnitOrSeconds()
		inf.TTFTDenominator = map[bool]string{true: "histogram"}[role == "ttft"]
		if d := ext.TTFTDenominator; d != "" {
			inf.TTFTDenominator = d
		}
		dur, err := time.ParseDuration(ext.Threshold)
		if err != nil {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationThreshold, "%q is not a latency such as 250ms", ext.Threshold))
			return nil
		}
		inf.Threshold = model.NewDecimal(int64(dur), int64(time.Second))
		if eng.IsNative() {
			inf.Native, inf.NativeSchema = true, nativeSchema(o, ps)
			if msg := nativeInexact(h, inf.NativeThreshold().Float(), inf.NativeSchema); msg != "" {
				*ps = append(*ps, o.warnf("metadata.annotations."+AnnotationThreshold, "%s %s", ext.Threshold, msg))
			}
		} else if _, exact := h.Bucket(inf.Threshold.Float()); !exact {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationThreshold, "%s is not a bucket boundary of %s; %s", ext.Threshold, h.Metric, nearest(h, inf.Threshold.Float())))
		}
	}
	if inf.Selector != "" {
		vs, err := query.NewParser().ParseMetricSelector("{" + inf.Selector + "}")
		if err != nil {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationSelector, "invalid selector: %v", err))
		}
		for _, m := range vs {
			inf.SelectorLabels = append(inf.SelectorLabels, m.Name)
			if msg := engineSetLabel(m.Name); msg != "" {
				*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationSelector, "%s", msg))
			}
		}
		sort.Strings(inf.SelectorLabels)
	}
	inf.Signals = l.signalsOf(eng)
	return inf
}

// reservedGroupLabels are labels the generated series and alerts set
// themselves, so a group cannot be named by them.
var reservedGroupLabels = []string{model.LabelSLO, model.LabelService, model.LabelSLI, model.LabelWindow, model.LabelBaseWindow, model.LabelSeverity, model.LabelBurnTier, model.LabelSLOTier, model.LabelTimeSlice, "le", "alertname"}

// batchPageProblem is why a batch SLO has no page tier: an alert labelled
// both batch and page would route as neither.
const batchPageProblem = "a batch SLO raises tickets only (a job waits on it, not a person); remove the page alerts, or make the tier interactive to page"

// engineOutcomeLabels are the labels the catalog's engines put a request's
// outcome in; the SLI's own queries name any other (see outcomeLabels).
var engineOutcomeLabels = []string{"finished_reason", "status_code", "code", "status", "outcome", "error_type", "error.type", "reason"}

// keysOf lists a map's names for a message, "none" when it is empty.
func keysOf[T any](m map[string]T) []string {
	if len(m) == 0 {
		return []string{"none"}
	}
	return slices.Sorted(maps.Keys(m))
}
