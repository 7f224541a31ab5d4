// Package importer converts the SLO specs of other tools (Sloth and Pyrra)
// into plain OpenSLO v1 with inferslo's annotations, reporting what cannot
// carry over as located problems and what changes in meaning per SLO.
package importer

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/OpenSLO/go-sdk/pkg/openslo"
	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	"github.com/OpenSLO/go-sdk/pkg/openslosdk"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

// Result is what importing gives: one OpenSLO file per input file that
// held something to convert, every problem, and a report per SLO.
type Result struct {
	Files    []File
	Problems spec.Problems
	Reports  []Report
}

// File is one converted file: its name (the input's base name) and text.
type File struct {
	Name string
	Data []byte
}

// Report says, for one converted SLO, where it came from and what changes
// in meaning from the source tool to inferslo.
type Report struct {
	SLO, Source string
	Changes     []string
}

// Import converts every Sloth and Pyrra object of the sources. An object of
// another format is an error naming it; an SLO that cannot be converted is
// left out with its problem, and the others still convert.
func Import(sources ...spec.Source) Result {
	var res Result
	names := map[string]bool{}
	for _, src := range sources {
		docs, ps := spec.SplitDocs(src.Name, src.Data)
		res.Problems = append(res.Problems, ps...)
		var objs []openslo.Object
		for _, d := range docs {
			var c conversion
			switch spec.Foreign(d.Node()) {
			case spec.SlothService:
				c = sloth(d, false)
			case spec.SlothCRD:
				c = sloth(d, true)
			case spec.PyrraSLO:
				c = pyrra(d)
			default:
				res.Problems = append(res.Problems, d.Errorf("", "not a Sloth service spec (version: prometheus/v1), Sloth PrometheusServiceLevel (sloth.slok.dev/v1) or Pyrra ServiceLevelObjective (pyrra.dev/v1alpha1); nothing to import"))
				continue
			}
			res.Problems = append(res.Problems, c.problems...)
			for _, o := range c.objects {
				key := string(o.GetKind()) + "/" + o.GetName()
				if names[key] {
					if o.GetKind() == openslo.KindService {
						continue
					}
					res.Problems = append(res.Problems, d.Errorf("", "%s %q is converted twice; names must be unique across the files imported together", o.GetKind(), o.GetName()))
					continue
				}
				names[key] = true
				objs = append(objs, o)
			}
			for i := range c.reports {
				c.reports[i].Source = src.Name
			}
			res.Reports = append(res.Reports, c.reports...)
		}
		if len(objs) == 0 {
			continue
		}
		if err := openslosdk.Validate(objs...); err != nil {
			res.Problems = append(res.Problems, spec.Problem{File: src.Name, Severity: spec.Error, Message: fmt.Sprintf("the converted objects are not valid OpenSLO: %v", err)})
			continue
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Converted to OpenSLO v1 by inferslo import from %s.\n", path.Base(src.Name))
		if err := openslosdk.Encode(&b, openslosdk.FormatYAML, objs...); err != nil {
			res.Problems = append(res.Problems, spec.Problem{File: src.Name, Severity: spec.Error, Message: fmt.Sprintf("cannot write OpenSLO: %v", err)})
			continue
		}
		res.Files = append(res.Files, File{Name: path.Base(src.Name), Data: b.Bytes()})
	}
	return res
}

// conversion is what one source object gives.
type conversion struct {
	objects  []openslo.Object
	problems spec.Problems
	reports  []Report
}

func (c *conversion) fail(p spec.Problem) { c.problems = append(c.problems, p) }

// promSource is a Prometheus metric source reading query.
func promSource(query string) *v1.SLIMetricSpec {
	return &v1.SLIMetricSpec{MetricSource: v1.SLIMetricSource{Type: "Prometheus", Spec: map[string]any{"query": query}}}
}

// percentTarget reads a target given in percent ("99.9") as OpenSLO's
// ratio, exactly: 99.9 becomes 0.999, not 0.9990000000000001.
func percentTarget(percent string) (float64, error) {
	d, err := model.ParseDecimal(strings.TrimSpace(percent) + "%")
	if err != nil {
		return 0, fmt.Errorf("%q is not a percentage such as 99.9", percent)
	}
	f, err := strconv.ParseFloat(d.String(), 64)
	if err != nil || f <= 0 || f >= 1 {
		return 0, fmt.Errorf("%s%% is not a target between 0 and 100 (exclusive)", percent)
	}
	return f, nil
}

// window is a rolling OpenSLO window of d.
// importedSLO is the v1 SLO an import writes: one objective over the
// ratio, counted by occurrences, with the extensions as annotations
// (labels, severities and lists always encode).
func importedSLO(name, description, service string, ratio v1.SLIRatioMetric, tw []v1.SLOTimeWindow, target float64, ext spec.Extensions, policies []v1.SLOAlertPolicy) v1.SLO {
	ann, _ := ext.Annotations()
	if len(ann) == 0 {
		ann = nil
	}
	return v1.NewSLO(v1.Metadata{Name: name, Annotations: ann}, v1.SLOSpec{
		Description:     description,
		Service:         service,
		Indicator:       &v1.SLOIndicatorInline{Metadata: v1.Metadata{Name: name}, Spec: v1.SLISpec{RatioMetric: &ratio}},
		BudgetingMethod: v1.SLOBudgetingMethodOccurrences,
		TimeWindow:      tw,
		Objectives:      []v1.SLOObjective{{Target: &target}},
		AlertPolicies:   policies,
	})
}

func window(d time.Duration) ([]v1.SLOTimeWindow, error) {
	dur, err := shorthand(d)
	if err != nil {
		return nil, err
	}
	return []v1.SLOTimeWindow{{Duration: dur, IsRolling: true}}, nil
}

// shorthand writes d in OpenSLO's duration form, one number and one unit:
// the largest of days, hours and minutes that divides it (1h30m is 90m).
func shorthand(d time.Duration) (v1.DurationShorthand, error) {
	for _, u := range []struct {
		unit time.Duration
		name v1.DurationShorthandUnit
	}{{24 * time.Hour, v1.DurationShorthandUnitDay}, {time.Hour, v1.DurationShorthandUnitHour}, {time.Minute, v1.DurationShorthandUnitMinute}} {
		if d > 0 && d%u.unit == 0 {
			return v1.NewDurationShorthand(int(d/u.unit), u.name), nil
		}
	}
	return v1.DurationShorthand{}, fmt.Errorf("%s is not a whole number of minutes, as OpenSLO durations are", model.FormatDuration(d))
}

// burnPolicies are inline alert policies of one tier: one per window pair
// (an OpenSLO policy holds one condition), all waiting the tier's `for` and
// notifying Alertmanager, which routes on the severity label.
func burnPolicies(name, severity string, forDur time.Duration, pairs []model.WindowPair) ([]v1.SLOAlertPolicy, error) {
	after, err := shorthand(forDur)
	if err != nil {
		return nil, err
	}
	var out []v1.SLOAlertPolicy
	for _, p := range pairs {
		long, err := shorthand(p.Long)
		if err != nil {
			return nil, err
		}
		factor := p.Factor.Float()
		id := fmt.Sprintf("%s-%s-%sx-%s", name, severity, strings.ReplaceAll(p.Factor.String(), ".", "-"), model.FormatDuration(p.Long))
		cond := v1.AlertPolicyCondition{AlertPolicyConditionInline: &v1.AlertPolicyConditionInline{
			Kind: openslo.KindAlertCondition,
			Metadata: v1.Metadata{
				Name:        id,
				Annotations: v1.Annotations{spec.AnnotationShortWindow: model.FormatDuration(p.Short)},
			},
			Spec: v1.AlertConditionSpec{Severity: severity, Condition: v1.AlertConditionType{
				Kind: v1.AlertConditionKindBurnRate, Operator: v1.OperatorGT, Threshold: &factor, LookbackWindow: long, AlertAfter: &after,
			}},
		}}
		target := v1.AlertPolicyNotificationTarget{AlertPolicyNotificationTargetInline: &v1.AlertPolicyNotificationTargetInline{
			Kind:     openslo.KindAlertNotificationTarget,
			Metadata: v1.Metadata{Name: "alertmanager"},
			Spec:     v1.AlertNotificationTargetSpec{Target: "alertmanager", Description: "Alertmanager routes on the alert's severity label."},
		}}
		out = append(out, v1.SLOAlertPolicy{SLOAlertPolicyInline: &v1.SLOAlertPolicyInline{
			Kind:     openslo.KindAlertPolicy,
			Metadata: v1.Metadata{Name: id},
			Spec:     v1.AlertPolicySpec{AlertWhenBreaching: true, Conditions: []v1.AlertPolicyCondition{cond}, NotificationTargets: []v1.AlertPolicyNotificationTarget{target}},
		}})
	}
	return out, nil
}
