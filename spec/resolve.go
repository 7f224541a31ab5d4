package spec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	prommodel "github.com/prometheus/common/model"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
	"github.com/inferslo/inferslo/spec/querybound"
)

const (
	minWindow = 24 * time.Hour
	maxWindow = 90 * 24 * time.Hour
)

// resolve turns every SLO object into model SLOs, one per objective.
func (l *loader) resolve() model.Set {
	var set model.Set
	names := map[string]object[v1.SLO]{}
	for _, o := range l.slos {
		slos, ps := l.resolveSLO(o)
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
	return set
}

func (l *loader) resolveSLO(o object[v1.SLO]) ([]model.SLO, Problems) {
	// text holds unsafe strings; they do not stop the checks that follow,
	// so one run reports every problem.
	var ps, text Problems
	spec := o.v.Spec
	ann := o.v.Metadata.Annotations
	for _, k := range sortedKeys(ann) {
		if !strings.HasPrefix(k, annotationPrefix) {
			continue
		}
		path := "metadata.annotations." + k
		switch {
		case !contains(sloAnnotations, k):
			text = append(text, o.errorf(path, "unknown annotation %q%s; inferslo reads %s", k, didYouMean(k, sloAnnotations), fmtList(sloAnnotations)))
		case k == AnnotationAutoscaling, k == AnnotationAlertLabels, k == AnnotationSeverities, k == AnnotationBuckets:
			// JSON whose own decoding checks each of its fields.
		case k == AnnotationEngineMetrics:
			// JSON that may be indented over several lines.
			checkText(o, &text, path, ann[k], prose)
		case k == AnnotationNoData, k == AnnotationBurnAlerts:
			if v := ann[k]; v != "true" && v != "false" {
				text = append(text, o.errorf(path, "%q is not true or false", v))
			}
		case k == AnnotationRunbookURL:
			if msg := runbookProblem(ann[k]); msg != "" {
				text = append(text, o.errorf(path, "%s", msg))
			}
		default:
			checkText(o, &text, path, ann[k], oneLine)
		}
	}
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
			base.Window = tw.Duration.Duration()
			if base.Window < minWindow || base.Window > maxWindow {
				ps = append(ps, o.errorf("spec.timeWindow[0].duration", "%s is outside the supported range of rolling windows, 1d to 90d", tw.Duration))
			}
		}
	}
	base.ScrapeInterval = o.annotationDuration(&ps, AnnotationScrapeInterval, DefaultScrapeInterval)
	base.Evaluation = o.annotationDuration(&ps, AnnotationEvaluation, DefaultEvaluation)
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
	if _, named := ann[AnnotationEngine]; !named && sliObj != nil {
		base.Inference = l.inferEngine(*sliObj, &base, &ps)
	}
	base.SLOTier = sloTier(o, &ps)
	// A batch burn is work that can wait: replicas bought for it would
	// serve no one waiting, so only a spec that asks scales on it.
	base.ScaleOnBurn = base.Inference != nil && base.Inference.Role != "errors" && !base.Batch()
	if v, ok := ann[AnnotationScaleOnBurn]; ok {
		switch v {
		case "true", "false":
			base.ScaleOnBurn = v == "true"
		default:
			ps = append(ps, o.errorf("metadata.annotations."+AnnotationScaleOnBurn, "%q is not true or false", v))
		}
	}
	base.Autoscaling = autoscaling(o, &ps, base.GroupBy)
	checkEngineQueries(o, &base, &ps)
	// Objectives and alert policies are checked even when the indicator
	// failed, so one run reports every problem; only a window they depend
	// on stops them.
	blocked := len(ps.Errors()) > 0
	if blocked && (base.Window < minWindow || base.Window > maxWindow) {
		return nil, append(ps, text...)
	}

	var out []model.SLO
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
		ps = append(ps, aPs...)
		s.Alerting = alerting
		// A rule group evaluated less often than the base window would skip
		// whole windows of events.
		if bw := s.BaseWindow(); s.Evaluation > bw && len(aPs.Errors()) == 0 {
			ps = append(ps, o.errorf("metadata.annotations."+AnnotationEvaluation, "%s is longer than the base window %s of SLO %s; valid: 1s to %s", model.FormatDuration(s.Evaluation), model.FormatDuration(bw), s.Name, model.FormatDuration(bw)))
			continue
		}
		checked := l.check(o, s)
		ps = append(ps, checked...)
		if len(checked.Errors()) > 0 {
			continue
		}
		out = append(out, s)
	}
	if blocked || len(text) > 0 {
		return nil, append(ps, text...)
	}
	return out, ps
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

func (o object[T]) annotations() map[string]string {
	switch v := any(o.v).(type) {
	case v1.SLO:
		return v.Metadata.Annotations
	}
	return nil
}

func (o object[T]) annotationDuration(ps *Problems, key string, def time.Duration) time.Duration {
	s, ok := o.annotations()[key]
	if !ok {
		return def
	}
	d, err := model.ParseDuration(s)
	if err != nil || d <= 0 {
		*ps = append(*ps, o.errorf("metadata.annotations."+key, "%q is not a duration such as 30s", s))
		return def
	}
	return d
}

// check runs the caller's checks on a resolved SLO.
func (l *loader) check(o object[v1.SLO], s model.SLO) Problems {
	var ps Problems
	for _, c := range l.checks {
		for _, f := range c(s) {
			if f.Warning {
				ps = append(ps, o.warnf(f.Path, "%s", f.Message))
			} else {
				ps = append(ps, o.errorf(f.Path, "%s", f.Message))
			}
		}
	}
	return ps
}

// indicator finds the SLO's SLI, inline or by reference.
func (l *loader) indicator(o object[v1.SLO], ps *Problems) (v1.SLISpec, *object[v1.SLI]) {
	spec := o.v.Spec
	if spec.Indicator != nil {
		return spec.Indicator.Spec, &object[v1.SLI]{v: v1.SLI{Metadata: spec.Indicator.Metadata, Spec: spec.Indicator.Spec}, d: o.d,
			mapPath: func(p string) string { return o.mapPath("spec.indicator." + p) }}
	}
	if spec.IndicatorRef != nil {
		sli, ok := l.slis[*spec.IndicatorRef]
		if !ok {
			*ps = append(*ps, o.errorf("spec.indicatorRef", "no SLI named %q in the specs given; known SLIs: %s", *spec.IndicatorRef, fmtList(keysOf(l.slis))))
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
		q, ok := l.query(sli, "spec.thresholdMetric.metricSource", m.MetricSource, ps)
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
		q, ok := l.query(sli, "spec.ratioMetric."+field+".metricSource", m.MetricSource, ps)
		if !ok {
			return nil
		}
		if r.Counter {
			if _, err := query.RateOf(q, 5*time.Minute); err != nil {
				*ps = append(*ps, sli.errorf("spec.ratioMetric."+field+".metricSource.spec.query", "%v", err))
				return nil
			}
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

// query reads a Prometheus query from an inline source or a DataSource.
func (l *loader) query(sli object[v1.SLI], path string, src v1.SLIMetricSource, ps *Problems) (string, bool) {
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
	for _, k := range sortedKeys(src.Spec) {
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
	return expr.String(), true
}

// inference reads the engine facts the shorthand writes as annotations.
func (l *loader) inference(o object[v1.SLO], ps *Problems) *model.Inference {
	ann := o.v.Metadata.Annotations
	id, ok := ann[AnnotationEngine]
	if !ok {
		return nil
	}
	var eng *engine.Engine
	if text, ok := ann[AnnotationEngineMetrics]; ok {
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
		e, err := l.cat.Resolve(id, ann[AnnotationEngineVersion])
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
	if text, ok := ann[AnnotationBuckets]; ok {
		path := "metadata.annotations." + AnnotationBuckets
		var buckets map[string][]float64
		if err := json.Unmarshal([]byte(text), &buckets); err != nil {
			*ps = append(*ps, o.errorf(path, "not a JSON object of bucket lists by SLI role, such as {\"ttft\": [0.1, 0.3, 1]}"))
			return nil
		}
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
	role := ann[AnnotationSLI]
	inf := &model.Inference{Engine: eng.ID, EngineTitle: eng.Title, EngineVersion: eng.Variant, Role: role, Selector: ann[AnnotationSelector]}
	if role != "errors" {
		h, ok := eng.Histograms[role]
		if !ok {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationSLI, "engine %s cannot measure %s: %s", engineName(eng), role, eng.Missing(role)))
			return nil
		}
		inf.Histogram, inf.Buckets, inf.Unit = h.Metric, h.Buckets, h.UnitOrSeconds()
		inf.TTFTDenominator = map[bool]string{true: "histogram"}[role == "ttft"]
		if d, ok := ann[AnnotationTTFTDenominator]; ok {
			inf.TTFTDenominator = d
		}
		dur, err := time.ParseDuration(ann[AnnotationThreshold])
		if err != nil {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationThreshold, "%q is not a latency such as 250ms", ann[AnnotationThreshold]))
			return nil
		}
		inf.Threshold = model.NewDecimal(int64(dur), int64(time.Second))
		if eng.IsNative() {
			inf.Native, inf.NativeSchema = true, nativeSchema(o, ps)
			if msg := nativeInexact(h, inf.NativeThreshold().Float(), inf.NativeSchema); msg != "" {
				*ps = append(*ps, o.warnf("metadata.annotations."+AnnotationThreshold, "%s %s", ann[AnnotationThreshold], msg))
			}
		} else if _, exact := h.Bucket(inf.Threshold.Float()); !exact {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationThreshold, "%s is not a bucket boundary of %s; %s", ann[AnnotationThreshold], h.Metric, nearest(h, inf.Threshold.Float())))
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
	inf.Signals = signalsOf(eng)
	return inf
}

// alerting maps OpenSLO alert policies onto tiers (conditions grouped by
// severity), or applies the workbook tiers when the SLO has none.
func (l *loader) alerting(o object[v1.SLO], s model.SLO) (model.Alerting, Problems) {
	var ps Problems
	ann := o.v.Metadata.Annotations
	a := model.Alerting{RunbookURL: ann[AnnotationRunbookURL], NoData: ann[AnnotationNoData] == "true"}
	if v, ok := ann[AnnotationMinEvents]; ok {
		d, err := model.ParseDecimal(v)
		if err != nil {
			ps = append(ps, o.errorf("metadata.annotations."+AnnotationMinEvents, "%q is not a number of events per second", v))
		}
		a.MinEventsPerSecond = d
	}
	a.Labels = alertLabels(o, s.GroupBy, &ps)
	a.SeverityLabels = severityLabels(o, &ps)
	minRate := shortestWindow(s)
	if len(o.v.Spec.AlertPolicies) == 0 {
		if ann[AnnotationBurnAlerts] == "false" {
			return a, ps
		}
		tiers, err := model.WorkbookTiersOf(model.TierSeverities(s.SLOTier), s.Window, minRate, s.Evaluation)
		if err != nil {
			return a, append(ps, o.errorf("spec.timeWindow[0].duration", "%v", err))
		}
		a.Tiers = tiers
	} else {
		a.Tiers = l.policyTiers(o, s, &a, &ps)
	}
	if s.Timeslices != nil {
		roundToSlices(o, s, a.Tiers, &ps)
	}
	for _, t := range a.Tiers {
		for _, p := range t.Windows {
			if err := model.UnreachableTarget(p, s.Objective); err != nil {
				ps = append(ps, o.errorf("spec.objectives[0].target", "the %s alert could never fire: %v; or disable the %s tier", t.Severity, err, t.Severity))
			}
		}
	}
	return a, ps
}

func (l *loader) policyTiers(o object[v1.SLO], s model.SLO, a *model.Alerting, ps *Problems) []model.Tier {
	bySeverity := map[string]*model.Tier{}
	minRate := shortestWindow(s)
	for i, ref := range o.v.Spec.AlertPolicies {
		path := fmt.Sprintf("spec.alertPolicies[%d]", i)
		var pol object[v1.AlertPolicy]
		switch {
		case ref.SLOAlertPolicyInline != nil:
			in := ref.SLOAlertPolicyInline
			pol = object[v1.AlertPolicy]{v: v1.AlertPolicy{Metadata: in.Metadata, Spec: in.Spec}, d: o.d,
				mapPath: func(p string) string { return o.mapPath(path + "." + p) }}
		case ref.SLOAlertPolicyRef != nil:
			found, ok := l.policies[ref.AlertPolicyRef]
			if !ok {
				*ps = append(*ps, o.errorf(path+".alertPolicyRef", "no AlertPolicy named %q in the specs given; known policies: %s", ref.AlertPolicyRef, fmtList(keysOf(l.policies))))
				continue
			}
			pol = found
		}
		a.NoData = a.NoData || pol.v.Spec.AlertWhenNoData
		for j, c := range pol.v.Spec.Conditions {
			cpath := fmt.Sprintf("spec.conditions[%d]", j)
			var cond object[v1.AlertCondition]
			switch {
			case c.AlertPolicyConditionInline != nil:
				in := c.AlertPolicyConditionInline
				cond = object[v1.AlertCondition]{v: v1.AlertCondition{Metadata: in.Metadata, Spec: in.Spec}, d: pol.d,
					mapPath: func(p string) string { return pol.mapPath(cpath + "." + p) }}
			case c.AlertPolicyConditionRef != nil:
				found, ok := l.conditions[c.ConditionRef]
				if !ok {
					*ps = append(*ps, pol.errorf(cpath+".conditionRef", "no AlertCondition named %q in the specs given; known conditions: %s", c.ConditionRef, fmtList(keysOf(l.conditions))))
					continue
				}
				cond = found
			}
			for _, t := range pol.v.Spec.NotificationTargets {
				if t.AlertPolicyNotificationTargetRef != nil {
					if _, ok := l.targets[t.TargetRef]; !ok {
						// Where alerts go is Alertmanager's routing, not the rules'.
						*ps = append(*ps, pol.warnf("spec.notificationTargets", "no AlertNotificationTarget named %q in the specs given; the rules do not need it (Alertmanager routes the alerts by their labels), so it is left out", t.TargetRef))
					}
				}
			}
			pair, tier, ok := conditionPair(cond, minRate, ps)
			if !ok {
				continue
			}
			if s.Batch() && tier.Severity == "page" {
				*ps = append(*ps, cond.errorf("spec.severity", "%s", batchPageProblem))
				continue
			}
			t := bySeverity[tier.Severity]
			if t == nil {
				t = &model.Tier{Severity: tier.Severity}
				bySeverity[tier.Severity] = t
			}
			// One alert rule per tier has one `for`: conditions of a severity
			// that ask for different ones cannot all be honoured.
			if tier.For > 0 && t.For > 0 && tier.For != t.For {
				*ps = append(*ps, cond.errorf("spec.condition.alertAfter", "%s differs from the alertAfter %s of another %s condition of this SLO; conditions of one severity share one alert rule, so give them the same alertAfter", model.FormatDuration(tier.For), model.FormatDuration(t.For), tier.Severity))
				continue
			}
			t.Windows = append(t.Windows, pair)
			if tier.For > 0 {
				t.For = tier.For
			}
		}
	}
	var sevs []string
	for sev := range bySeverity {
		sevs = append(sevs, sev)
	}
	// page before ticket, then any other severities by name
	sort.Slice(sevs, func(i, j int) bool {
		return severityRank(sevs[i]) < severityRank(sevs[j]) || severityRank(sevs[i]) == severityRank(sevs[j]) && sevs[i] < sevs[j]
	})
	var tiers []model.Tier
	for _, sev := range sevs {
		t := bySeverity[sev]
		sort.Slice(t.Windows, func(i, j int) bool { return t.Windows[i].Long < t.Windows[j].Long })
		if t.For == 0 {
			t.For = model.DefaultFor(t.Windows[0].Long, s.Evaluation)
		}
		tiers = append(tiers, *t)
	}
	return tiers
}

func severityRank(s string) int {
	switch s {
	case "page":
		return 0
	case "ticket":
		return 1
	}
	return 2
}

// conditionPair reads a burn-rate condition as a window pair; its `for` is
// alertAfter (zero: the default).
func conditionPair(c object[v1.AlertCondition], minRate time.Duration, ps *Problems) (model.WindowPair, model.Tier, bool) {
	cond := c.v.Spec.Condition
	if cond.Operator != v1.OperatorGT && cond.Operator != v1.OperatorGTE {
		*ps = append(*ps, c.errorf("spec.condition.op", "a burn-rate condition fires above its threshold; use op: gt"))
		return model.WindowPair{}, model.Tier{}, false
	}
	if cond.Threshold == nil || *cond.Threshold <= 0 {
		*ps = append(*ps, c.errorf("spec.condition.threshold", "the burn-rate factor must be positive, such as 14.4"))
		return model.WindowPair{}, model.Tier{}, false
	}
	for _, k := range sortedKeys(c.v.Metadata.Annotations) {
		if strings.HasPrefix(k, annotationPrefix) && k != AnnotationShortWindow {
			*ps = append(*ps, c.errorf("metadata.annotations."+k, "unknown annotation %q%s; an AlertCondition reads only %s", k, didYouMean(k, []string{AnnotationShortWindow}), AnnotationShortWindow))
		}
	}
	long := cond.LookbackWindow.Duration()
	short := long / 12
	if s, ok := c.v.Metadata.Annotations[AnnotationShortWindow]; ok {
		d, err := model.ParseDuration(s)
		if err != nil || d <= 0 || d > long {
			*ps = append(*ps, c.errorf("metadata.annotations."+AnnotationShortWindow, "%q is not a duration between zero and the lookback window %s", s, cond.LookbackWindow))
			return model.WindowPair{}, model.Tier{}, false
		}
		short = d
	}
	if long < minRate {
		*ps = append(*ps, c.errorf("spec.condition.lookbackWindow", "%s is shorter than %s, four scrape intervals: rate() needs more samples", cond.LookbackWindow, model.FormatDuration(minRate)))
		return model.WindowPair{}, model.Tier{}, false
	}
	if short < minRate {
		short = minRate
	}
	if msg := severityProblem(c.v.Spec.Severity); msg != "" {
		*ps = append(*ps, c.errorf("spec.severity", "%s", msg))
		return model.WindowPair{}, model.Tier{}, false
	}
	t := model.Tier{Severity: c.v.Spec.Severity}
	if cond.AlertAfter != nil {
		t.For = cond.AlertAfter.Duration()
	}
	return model.WindowPair{Long: long, Short: short, Factor: model.DecimalFromFloat(*cond.Threshold)}, t, true
}

// reservedGroupLabels are labels the generated series and alerts set
// themselves, so a group cannot be named by them.
var reservedGroupLabels = []string{model.LabelSLO, model.LabelService, model.LabelSLI, model.LabelWindow, model.LabelBaseWindow, model.LabelSeverity, model.LabelBurnTier, model.LabelSLOTier, model.LabelTimeSlice, "le", "alertname"}

// sloTier reads the SLO's tier; empty when the spec names none.
func sloTier(o object[v1.SLO], ps *Problems) string {
	v, ok := o.v.Metadata.Annotations[AnnotationTier]
	if !ok {
		return ""
	}
	if msg := tierProblem(v); msg != "" {
		*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationTier, "%s", msg))
		return ""
	}
	return v
}

// batchPageProblem is why a batch SLO has no page tier: an alert labelled
// both batch and page would route as neither.
const batchPageProblem = "a batch SLO raises tickets only (a job waits on it, not a person); remove the page alerts, or make the tier interactive to page"

// tierProblem says why v is not an SLO tier, or "" when it is one.
func tierProblem(v string) string {
	if contains(model.SLOTiers, v) {
		return ""
	}
	return fmt.Sprintf("%q is not a tier: valid are %s (the default: a person waits; pages and tickets) and %s (a job waits; tickets only)",
		v, model.SLOTierInteractive, model.SLOTierBatch)
}

// groupBy reads the grouping labels from their annotation: label names,
// comma-separated.
//
// An outcome label (one the good or bad query selects on that the total
// query does not, such as finished_reason or status_code) is refused: a
// group per outcome would see its own outcome only, so the group of
// errors would burn at 100% on healthy traffic.
func groupBy(o object[v1.SLO], sli model.SLI, ps *Problems) []string {
	raw, ok := o.v.Metadata.Annotations[AnnotationGroupBy]
	if !ok {
		return nil
	}
	outcomes := outcomeLabels(sli)
	var out []string
	for i, name := range strings.Split(raw, ",") {
		name = strings.TrimSpace(name)
		path := fmt.Sprintf("metadata.annotations.%s[%d]", AnnotationGroupBy, i)
		switch {
		case !query.ValidLabelName(name) || strings.HasPrefix(name, "__"):
			*ps = append(*ps, o.errorf(path, "%q is not a Prometheus label name; group by labels of the SLI's series, such as model_name", name))
		case contains(reservedGroupLabels, name):
			*ps = append(*ps, o.errorf(path, "%q is a label inferslo sets on its own series and alerts; group by a label of the SLI's series, such as model_name", name))
		case outcomes[name] || contains(engineOutcomeLabels, name):
			*ps = append(*ps, o.errorf(path, "%q is a label of the request's outcome, not of where it ran: each group would count only its own outcome, and the group of errors would burn on healthy traffic; group by a label of the SLI's series, such as model_name", name))
		case contains(out, name):
			*ps = append(*ps, o.errorf(path, "%q is listed twice", name))
		default:
			out = append(out, name)
		}
	}
	return out
}

// engineOutcomeLabels are the labels the catalog's engines put a request's
// outcome in; the SLI's own queries name any other (see outcomeLabels).
var engineOutcomeLabels = []string{"finished_reason", "status_code", "code", "status", "outcome", "error_type", "error.type", "reason"}

// outcomeLabels are the labels the good or bad query selects on and the
// total query does not.
func outcomeLabels(sli model.SLI) map[string]bool {
	out := map[string]bool{}
	if sli.Total == nil {
		return out
	}
	inTotal := map[string]bool{}
	for _, vs := range selectorsOf(sli.Total.Expr) {
		for _, m := range vs.LabelMatchers {
			inTotal[m.Name] = true
		}
	}
	for _, q := range []*model.Query{sli.Good, sli.Bad} {
		if q == nil {
			continue
		}
		for _, vs := range selectorsOf(q.Expr) {
			for _, m := range vs.LabelMatchers {
				if m.Name != prommodel.MetricNameLabel && !inTotal[m.Name] {
					out[m.Name] = true
				}
			}
		}
	}
	return out
}

// jsonLabels reads an annotation holding a JSON object of strings.
func jsonLabels(o object[v1.SLO], key string, ps *Problems) map[string]string {
	raw, ok := o.v.Metadata.Annotations[key]
	if !ok {
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		*ps = append(*ps, o.errorf("metadata.annotations."+key, "not a JSON object of strings: %v", err))
		return nil
	}
	return m
}

// checkLabelValue rejects label values that would not reach an alert as
// written: an empty value drops the label, and the shared text check refuses
// template delimiters, Grafana variables and control characters.
func checkLabelValue(o object[v1.SLO], path, v string, ps *Problems) {
	if v == "" {
		*ps = append(*ps, o.errorf(path, "an empty value drops the label; give a value"))
		return
	}
	checkText(o, ps, path, v, oneLine)
}

// alertLabels reads the labels added to every alert: label names that do not
// clash with those the alerts set themselves.
func alertLabels(o object[v1.SLO], groupBy []string, ps *Problems) map[string]string {
	m := jsonLabels(o, AnnotationAlertLabels, ps)
	reserved := append(slices.Clone(reservedGroupLabels), groupBy...)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		path := "metadata.annotations." + AnnotationAlertLabels + "." + k
		switch {
		case !query.ValidLabelName(k) || strings.HasPrefix(k, "__"):
			*ps = append(*ps, o.errorf(path, "%q is not a Prometheus label name", k))
		case k == model.LabelSLOTier:
			*ps = append(*ps, o.errorf(path, "%q is set from the SLO's tier; set the tier (spec.tier, or the annotation %s) instead", k, AnnotationTier))
		case contains(reserved, k):
			*ps = append(*ps, o.errorf(path, "%q is a label the alerts set themselves (%s); choose another name, such as team", k, fmtList(reserved)))
		default:
			checkLabelValue(o, path, m[k], ps)
		}
	}
	return m
}

// severityLabels reads the severity label's value per tier.
func severityLabels(o object[v1.SLO], ps *Problems) map[string]string {
	m := jsonLabels(o, AnnotationSeverities, ps)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		path := "metadata.annotations." + AnnotationSeverities + "." + k
		if !contains(model.Severities, k) {
			*ps = append(*ps, o.errorf(path, "%q is not an alert tier; valid: %s", k, fmtList(model.Severities)))
			continue
		}
		if msg := severityProblem(m[k]); msg != "" {
			*ps = append(*ps, o.errorf(path, "%s", msg))
		}
	}
	return m
}

// autoscaling reads the KEDA section from its annotation.
func autoscaling(o object[v1.SLO], ps *Problems, groupBy []string) *model.Autoscaling {
	raw, ok := o.v.Metadata.Annotations[AnnotationAutoscaling]
	if !ok {
		return nil
	}
	path := "metadata.annotations." + AnnotationAutoscaling
	var a ShorthandAutoscaling
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		*ps = append(*ps, o.errorf(path, "invalid autoscaling JSON: %v", err))
		return nil
	}
	out := &model.Autoscaling{
		TargetKind:             a.Target.Kind,
		TargetName:             a.Target.Name,
		Namespace:              a.Namespace,
		MinReplicas:            1,
		MaxReplicas:            a.MaxReplicas,
		ServerAddress:          a.Prometheus,
		AuthenticationRef:      a.AuthenticationRef,
		Headroom:               model.NewDecimal(8, 10),
		BurnRateTrigger:        a.BurnRateTrigger,
		ScaleUpStabilization:   30 * time.Second,
		ScaleDownStabilization: 120 * time.Second,
	}
	if out.TargetKind == "" {
		out.TargetKind = "Deployment"
	}
	if out.TargetName == "" {
		*ps = append(*ps, o.errorf(path+".target.name", "required: the Deployment (or other scale target) to scale"))
	}
	if out.ServerAddress == "" {
		*ps = append(*ps, o.errorf(path+".prometheus", "required: the Prometheus URL KEDA queries, such as http://prometheus.monitoring:9090"))
	}
	if a.MinReplicas != nil {
		out.MinReplicas = *a.MinReplicas
	}
	if out.MaxReplicas < 1 || out.MaxReplicas < out.MinReplicas {
		*ps = append(*ps, o.errorf(path+".maxReplicas", "must be at least 1 and at least minReplicas (%d)", out.MinReplicas))
	}
	checkAutoscaling(o, ps, path, a, out)
	out.Groups = scaleGroups(o, ps, path, a, groupBy)
	if a.FallbackReplicas != nil {
		out.FallbackReplicas = *a.FallbackReplicas
	}
	dec2 := func(field, v string, dst *model.Decimal) {
		if v == "" {
			return
		}
		d, err := model.ParseDecimal(v)
		if err != nil {
			*ps = append(*ps, o.errorf(path+"."+field, "%q is not a number", v))
			return
		}
		*dst = d
	}
	dur := func(field, v string, dst *time.Duration) {
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			*ps = append(*ps, o.errorf(path+"."+field, "%q is not a duration such as 30s", v))
			return
		}
		*dst = d
	}
	dec2("headroom", a.Headroom, &out.Headroom)
	dec2("queuePerReplica", a.QueuePerReplica, &out.QueuePerReplica)
	dur("scaleUpStabilization", a.ScaleUpStabilization, &out.ScaleUpStabilization)
	dur("scaleDownStabilization", a.ScaleDownStabilization, &out.ScaleDownStabilization)
	if c := a.Capacity; c != nil {
		dec2("capacity.peakRPS", c.PeakRPS, &out.Capacity.PeakRPS)
		dec2("capacity.replicaConcurrency", c.ReplicaConcurrency, &out.Capacity.ReplicaConcurrency)
		dur("capacity.meanServiceTime", c.MeanServiceTime, &out.Capacity.MeanServiceTime)
	}
	return out
}

// keysOf lists a map's names for a message, "none" when it is empty.
func keysOf[T any](m map[string]T) []string {
	if len(m) == 0 {
		return []string{"none"}
	}
	return sortedKeys(m)
}
