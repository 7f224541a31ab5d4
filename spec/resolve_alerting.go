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
)

// maxMinEvents bounds the traffic gate of burn alerts: above it, a gate
// would silence the alerts of all but the busiest fleets.
const maxMinEvents = 10000

// minEvents reads the traffic gate of burn alerts, from the shorthand and
// the annotation alike: a number of events per second above zero and at
// most maxMinEvents; else why not.
func minEvents(v string) (model.Decimal, string) {
	d, err := model.ParseDecimal(v)
	if err != nil {
		return model.Decimal{}, fmt.Sprintf("%q is not a number of events per second", v)
	}
	if d.Cmp(model.NewDecimal(0, 1)) <= 0 || d.Cmp(model.NewDecimal(maxMinEvents, 1)) > 0 {
		return model.Decimal{}, fmt.Sprintf("%q is not within (0, %d] events per second; burn alerts stay silent below it", v, maxMinEvents)
	}
	return d, ""
}

// alerting maps OpenSLO alert policies onto tiers (conditions grouped by
// severity), or applies the workbook tiers when the SLO has none.
func (l *loader) alerting(o object[v1.SLO], s model.SLO) (model.Alerting, Problems) {
	var ps Problems
	ext := o.ext
	a := model.Alerting{RunbookURL: ext.RunbookURL, DashboardURL: ext.DashboardURL, NoData: boolOr(ext.NoData, false)}
	if v := ext.MinEvents; v != "" {
		d, msg := minEvents(v)
		if msg != "" {
			ps = append(ps, o.errorf("metadata.annotations."+AnnotationMinEvents, "%s", msg))
		}
		a.MinEventsPerSecond = d
	}
	a.Labels = alertLabels(o, s.GroupBy, &ps)
	a.SeverityLabels = severityLabels(o, &ps)
	minRate := shortestWindow(s)
	if len(o.v.Spec.AlertPolicies) == 0 {
		if !boolOr(ext.BurnAlerts, true) {
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
				*ps = append(*ps, o.errorf(path+".alertPolicyRef", "%s", l.noObject("AlertPolicy", "policies", ref.AlertPolicyRef, keysOf(l.policies))))
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
					*ps = append(*ps, pol.errorf(cpath+".conditionRef", "%s", l.noObject("AlertCondition", "conditions", c.ConditionRef, keysOf(l.conditions))))
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
			if s.Batch() && tier.Severity == model.PageTier {
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
	case model.PageTier:
		return 0
	case model.TicketTier:
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
	for _, k := range slices.Sorted(maps.Keys(c.v.Metadata.Annotations)) {
		if strings.HasPrefix(k, annotationPrefix) && k != AnnotationShortWindow {
			*ps = append(*ps, c.errorf("metadata.annotations."+k, "unknown annotation %q%s; an AlertCondition reads only %s", k, didYouMean(k, []string{AnnotationShortWindow}), AnnotationShortWindow))
		}
	}
	long, ok := openSLODuration(cond.LookbackWindow)
	if !ok {
		*ps = append(*ps, c.errorf("spec.condition.lookbackWindow", "%q is not a duration: write a whole number and a unit m, h or d, such as 1h", cond.LookbackWindow))
		return model.WindowPair{}, model.Tier{}, false
	}
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
	short = max(short, minRate)
	if msg := severityProblem(c.v.Spec.Severity); msg != "" {
		*ps = append(*ps, c.errorf("spec.severity", "%s", msg))
		return model.WindowPair{}, model.Tier{}, false
	}
	t := model.Tier{Severity: c.v.Spec.Severity}
	if cond.AlertAfter != nil && *cond.AlertAfter != (v1.DurationShorthand{}) {
		f, ok := openSLODuration(*cond.AlertAfter)
		if !ok {
			*ps = append(*ps, c.errorf("spec.condition.alertAfter", "%q is not a duration: write a whole number and a unit m or h, such as 2m", cond.AlertAfter))
			return model.WindowPair{}, model.Tier{}, false
		}
		t.For = f
	}
	return model.WindowPair{Long: long, Short: short, Factor: model.DecimalFromFloat(*cond.Threshold)}, t, true
}

// sloTier reads the SLO's tier; empty when the spec names none.
func sloTier(o object[v1.SLO], ps *Problems) string {
	v := o.ext.Tier
	if v == "" {
		return ""
	}
	if msg := tierProblem(v); msg != "" {
		*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationTier, "%s", msg))
		return ""
	}
	return v
}

// tierProblem says why v is not an SLO tier, or "" when it is one.
func tierProblem(v string) string {
	if slices.Contains(model.SLOTiers, v) {
		return ""
	}
	return fmt.Sprintf("%q is not a tier: valid are %s (the default: a person waits; pages and tickets) and %s (a job waits; tickets only)",
		v, model.SLOTierInteractive, model.SLOTierBatch)
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
	m := o.ext.AlertLabels
	if extensionProblem(o, AnnotationAlertLabels, ps) {
		m = nil
	}
	reserved := append(slices.Clone(reservedGroupLabels), groupBy...)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		path := "metadata.annotations." + AnnotationAlertLabels + "." + k
		switch {
		case !query.ValidLabelName(k) || strings.HasPrefix(k, "__"):
			*ps = append(*ps, o.errorf(path, "%q is not a Prometheus label name", k))
		case k == model.LabelSLOTier:
			*ps = append(*ps, o.errorf(path, "%q is set from the SLO's tier; set the tier (spec.tier, or the annotation %s) instead", k, AnnotationTier))
		case slices.Contains(reserved, k):
			*ps = append(*ps, o.errorf(path, "%q is a label the alerts set themselves (%s); choose another name, such as team", k, fmtList(reserved)))
		default:
			checkLabelValue(o, path, m[k], ps)
		}
	}
	return m
}

// severityLabels reads the severity label's value per tier.
func severityLabels(o object[v1.SLO], ps *Problems) map[string]string {
	m := o.ext.Severities
	if extensionProblem(o, AnnotationSeverities, ps) {
		m = nil
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		path := "metadata.annotations." + AnnotationSeverities + "." + k
		if !slices.Contains(model.Severities, k) {
			*ps = append(*ps, o.errorf(path, "%q is not an alert tier; valid: %s", k, fmtList(model.Severities)))
			continue
		}
		if msg := severityProblem(m[k]); msg != "" {
			*ps = append(*ps, o.errorf(path, "%s", msg))
		}
	}
	return m
}

// groupBy reads the grouping labels from their annotation: label names,
// comma-separated.
//
// An outcome label (one the good or bad query selects on that the total
// query does not, such as finished_reason or status_code) is refused: a
// group per outcome would see its own outcome only, so the group of
// errors would burn at 100% on healthy traffic.
func groupBy(o object[v1.SLO], sli model.SLI, ps *Problems) []string {
	outcomes := outcomeLabels(sli)
	var out []string
	for i, name := range o.ext.GroupBy {
		path := fmt.Sprintf("metadata.annotations.%s[%d]", AnnotationGroupBy, i)
		switch {
		case !query.ValidLabelName(name) || strings.HasPrefix(name, "__"):
			*ps = append(*ps, o.errorf(path, "%q is not a Prometheus label name; group by labels of the SLI's series, such as model_name", name))
		case slices.Contains(reservedGroupLabels, name):
			*ps = append(*ps, o.errorf(path, "%q is a label inferslo sets on its own series and alerts; group by a label of the SLI's series, such as model_name", name))
		case outcomes[name] || slices.Contains(engineOutcomeLabels, name):
			*ps = append(*ps, o.errorf(path, "%q is a label of the request's outcome, not of where it ran: each group would count only its own outcome, and the group of errors would burn on healthy traffic; group by a label of the SLI's series, such as model_name", name))
		case slices.Contains(out, name):
			*ps = append(*ps, o.errorf(path, "%q is listed twice", name))
		default:
			out = append(out, name)
		}
	}
	return out
}

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
				if m.Name != query.MetricNameLabel && !inTotal[m.Name] {
					out[m.Name] = true
				}
			}
		}
	}
	return out
}
