package spec

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/OpenSLO/go-sdk/pkg/openslo"
	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
)

// expandAlerting writes custom tiers as OpenSLO alert policies, one per
// window pair (OpenSLO allows one condition per policy). Default tiers are
// left implicit: an SLO without policies gets them.
func expandAlerting(d *doc, s *Shorthand, slo *v1.SLO, ext *Extensions, scrape, evaluation time.Duration) ([]v1.SLOAlertPolicy, Problems) {
	var ps Problems
	a := s.Spec.Alerting
	noData := boolOr(a.NoData, true)
	ext.NoData, ext.RunbookURL, ext.DashboardURL = &noData, a.RunbookURL, a.DashboardURL
	ext.AlertLabels, ext.Severities = a.Labels, a.Severities
	if a.MinEventsPerSecond != "" {
		if _, msg := minEvents(a.MinEventsPerSecond); msg != "" {
			ps = append(ps, d.errorf("spec.alerting.minEventsPerSecond", "%s", msg))
		}
		ext.MinEvents = a.MinEventsPerSecond
	}
	tiers := map[string]ShorthandTier{model.PageTier: a.Page, model.TicketTier: a.Ticket}
	// on tells whether a tier is enabled: by the spec, else by the SLO
	// tier's defaults (a batch SLO raises tickets only).
	defaults := model.TierSeverities(s.Spec.Tier)
	on := func(sev string) bool { return boolOr(tiers[sev].Enabled, slices.Contains(defaults, sev)) }
	if !slices.Contains(defaults, model.PageTier) && (boolOr(a.Page.Enabled, false) || a.Page.For != "") {
		ps = append(ps, d.errorf("spec.alerting.page", "%s", batchPageProblem))
	}
	custom := false
	var sevs []string
	fors := map[string]time.Duration{}
	for _, sev := range model.Severities {
		t := tiers[sev]
		if on(sev) {
			sevs = append(sevs, sev)
		}
		if on(sev) != slices.Contains(defaults, sev) {
			custom = true
		}
		if t.For != "" {
			custom = true
			f, err := model.ParseDuration(t.For)
			if err != nil || f%time.Minute != 0 || f <= 0 {
				ps = append(ps, d.errorf("spec.alerting."+sev+".for", "%q is not a positive whole number of minutes (OpenSLO's alertAfter), such as 2m or 1h; leave for out for the default", t.For))
			}
			fors[sev] = f
		}
	}
	if len(sevs) == 0 {
		off := false
		ext.BurnAlerts = &off
		return nil, ps
	}
	if !custom || len(ps) > 0 {
		return nil, ps
	}
	window, ok := openSLODuration(slo.Spec.TimeWindow[0].Duration)
	if !ok {
		return nil, ps // expand reports the window
	}
	all, err := model.WorkbookTiersOf(sevs, window, 4*scrape, evaluation)
	if err != nil {
		return nil, append(ps, d.errorf("spec.window", "%v", err))
	}
	var policies []v1.SLOAlertPolicy
	for _, t := range all {
		target := v1.AlertPolicyNotificationTarget{AlertPolicyNotificationTargetInline: &v1.AlertPolicyNotificationTargetInline{
			Kind:     openslo.KindAlertNotificationTarget,
			Metadata: v1.Metadata{Name: s.serviceName() + "-" + t.Severity},
			Spec: v1.AlertNotificationTargetSpec{Target: "alertmanager",
				Description: fmt.Sprintf("Alertmanager, routing on severity=%q", t.Severity)},
		}}
		for _, p := range t.Windows {
			long, ok := minutes(p.Long)
			if !ok {
				ps = append(ps, d.errorf("spec.window", "the %s tier's %s window is not whole minutes, which OpenSLO's lookbackWindow needs; choose a window in whole days", t.Severity, model.FormatDuration(p.Long)))
				continue
			}
			factor := p.Factor.Float()
			cond := v1.AlertConditionType{Kind: v1.AlertConditionKindBurnRate, Operator: v1.OperatorGT, Threshold: &factor, LookbackWindow: long}
			if f, ok := fors[t.Severity]; ok {
				after, _ := minutes(f)
				cond.AlertAfter = &after
			}
			name := fmt.Sprintf("%s-%s-%s", slo.Metadata.Name, t.Severity, strings.ToLower(long.String()))
			policies = append(policies, v1.SLOAlertPolicy{SLOAlertPolicyInline: &v1.SLOAlertPolicyInline{
				Kind:     openslo.KindAlertPolicy,
				Metadata: v1.Metadata{Name: name},
				Spec: v1.AlertPolicySpec{
					AlertWhenBreaching: true,
					AlertWhenNoData:    boolOr(a.NoData, true),
					Conditions: []v1.AlertPolicyCondition{{AlertPolicyConditionInline: &v1.AlertPolicyConditionInline{
						Kind:     openslo.KindAlertCondition,
						Metadata: v1.Metadata{Name: name, Annotations: v1.Annotations{AnnotationShortWindow: model.FormatDuration(p.Short)}},
						Spec: v1.AlertConditionSpec{Severity: t.Severity, Condition: cond,
							Description: fmt.Sprintf("%s of the error budget spent within %s", p.BudgetFraction(window).Percent(), model.FormatDuration(p.Long))},
					}}},
					NotificationTargets: []v1.AlertPolicyNotificationTarget{target},
				},
			}})
		}
	}
	return policies, ps
}

func minutes(d time.Duration) (v1.DurationShorthand, bool) {
	if d%time.Minute != 0 || d <= 0 {
		return v1.DurationShorthand{}, false
	}
	return v1.NewDurationShorthand(int(d/time.Minute), v1.DurationShorthandUnitMinute), true
}
