package main

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/kube"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/ruler"
	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/templates"
)

// shapeFlags shape the artifacts; compile and validate both take them, so
// validate checks what compile would write with the same flags.
type shapeFlags struct {
	Namespace         string            `help:"Namespace of the generated PrometheusRule objects." placeholder:"NS"`
	RuleLabel         map[string]string `help:"Label of the PrometheusRule objects, repeatable (a Prometheus selects rules by label)." placeholder:"KEY=VALUE"`
	ExternalLabels    []string          `name:"external-labels" help:"Names of the external labels your Prometheus servers add (such as cluster,env), repeatable: the Alertmanager inhibit rules mute only alerts with the same values, so one environment never mutes another's (cluster, env, environment and region are always held), and every dashboard splits, joins and names its series by them, for a global view (Thanos Query, Mimir, federation)." placeholder:"NAME,..."`
	PartialResponse   string            `name:"thanos-partial-response" help:"Thanos partial_response_strategy of the ruler groups: abort or warn." enum:",abort,warn" default:""`
	Ruler             string            `help:"Rule evaluator the ruler/ files are for: prometheus, thanos, mimir, cortex or vmalert. mimir chains groups within its 20-rule limit and warns past its 70 groups per tenant; vmalert refuses SLOs on native histograms, which MetricsQL cannot read." enum:",prometheus,thanos,mimir,cortex,vmalert" default:""`
	AnalysisTemplates bool              `name:"analysis-templates" help:"Also write an Argo Rollouts AnalysisTemplate per service (argo/<service>.analysistemplate.yaml) that fails a canary when an SLO or group has less of its error budget left than --analysis-fail-below (the query and gate of inferslo budget)."`
	AnalysisFailBelow float64           `name:"analysis-fail-below" default:"10" help:"The AnalysisTemplates' default gate: the percentage of the error budget (0 to 100) below which a canary fails; a Rollout may pass its own as the fail-below argument (a share, 0.1 for 10%)." placeholder:"PCT"`
	Outputs           []string          `name:"outputs" help:"Write only these kinds of artifact, by their folder: prometheus, kubernetes, ruler, grafana, keda, alertmanager, catalog, argo (default: all); every artifact is still built and checked." placeholder:"KIND,..."`
	MaxRulesPerGroup  int               `name:"max-rules-per-group" help:"Chain ruler groups into parts of at most this many rules (default: the ruler's own limit; 0: none)." default:"-1" placeholder:"N"`
}

// options are the compiler's options for these flags.
func (f shapeFlags) options(tests bool, text *templates.Text) (compiler.Options, error) {
	for _, l := range f.ExternalLabels {
		if !query.ValidLabelName(l) {
			return compiler.Options{}, fmt.Errorf("--external-labels: %q is not a label name", l)
		}
	}
	target, err := ruler.Lookup(f.Ruler)
	if err != nil {
		return compiler.Options{}, fmt.Errorf("--ruler: %w", err)
	}
	if err := compiler.CheckOutputs(f.Outputs); err != nil {
		return compiler.Options{}, fmt.Errorf("--outputs: %w", err)
	}
	if p := f.AnalysisFailBelow; math.IsNaN(p) || p < 0 || p > 100 {
		return compiler.Options{}, fmt.Errorf("--analysis-fail-below %v: valid is a percentage from 0 to 100", p)
	}
	return compiler.Options{
		Tests:             tests,
		AnalysisTemplates: f.AnalysisTemplates,
		AnalysisFailBelow: f.AnalysisFailBelow / 100,
		Kube:              kube.Options{Namespace: f.Namespace, Labels: f.RuleLabel, PartialResponseStrategy: f.PartialResponse},
		ExternalLabels:    f.ExternalLabels,
		Ruler:             kube.RulerOptions{PartialResponseStrategy: f.PartialResponse, Target: target, MaxRulesPerGroup: f.maxRules(target)},
		Outputs:           f.Outputs,
		Text:              text,
	}, nil
}

// maxRules is --max-rules-per-group, the target's limit when not given.
func (f shapeFlags) maxRules(t ruler.Target) int {
	if f.MaxRulesPerGroup < 0 {
		return t.MaxRulesPerGroup
	}
	return f.MaxRulesPerGroup
}

// args lists the flags as given, in a fixed order, for the output
// folder's record of how it was made.
func (f shapeFlags) args() []string {
	var args []string
	if f.AnalysisTemplates {
		args = append(args, "--analysis-templates", "--analysis-fail-below", strconv.FormatFloat(f.AnalysisFailBelow, 'f', -1, 64))
	}
	if f.Namespace != "" {
		args = append(args, "--namespace", f.Namespace)
	}
	for _, k := range slices.Sorted(maps.Keys(f.RuleLabel)) {
		args = append(args, "--rule-label", k+"="+f.RuleLabel[k])
	}
	if len(f.ExternalLabels) > 0 {
		args = append(args, "--external-labels", strings.Join(f.ExternalLabels, ","))
	}
	if f.PartialResponse != "" {
		args = append(args, "--thanos-partial-response", f.PartialResponse)
	}
	if f.Ruler != "" {
		args = append(args, "--ruler", f.Ruler)
	}
	if len(f.Outputs) > 0 {
		args = append(args, "--outputs", strings.Join(f.Outputs, ","))
	}
	if f.MaxRulesPerGroup >= 0 {
		args = append(args, "--max-rules-per-group", fmt.Sprint(f.MaxRulesPerGroup))
	}
	return args
}

// rulerChecker checks each SLO against the ruler the files are for, at
// the spec's lines: vmalert cannot evaluate an SLO whose rules MetricsQL
// does not parse (native histograms), and a tenant past the ruler's group
// limit is warned at the SLO whose groups cross it. nil when the ruler
// has neither concern.
func (f shapeFlags) rulerChecker() (spec.Checker, error) {
	t, err := ruler.Lookup(f.Ruler)
	if err != nil {
		return nil, fmt.Errorf("--ruler: %w", err)
	}
	limit := f.maxRules(t)
	if !t.MetricsQL && t.MaxGroupsPerTenant == 0 && limit == 0 {
		return nil, nil
	}
	groups := 0
	return func(s model.SLO) []spec.Problem {
		g, err := rules.Group(s, nil)
		if err != nil {
			// compile reports the error itself.
			return nil
		}
		var out []spec.Problem
		for _, r := range g.Rules {
			if err := t.Evaluates(r.Expr); err != nil {
				out = append(out, spec.Problem{Path: "spec.indicator", Severity: spec.Error,
					Message: fmt.Sprintf("%s cannot evaluate this SLO's rules (%s: %v); native histograms have no MetricsQL form: use an engine exposing classic buckets, or another ruler", t.Name, r.Record+r.Alert, errors.Unwrap(err))})
				break
			}
		}
		before := groups
		chained, _, err := rules.Service{Name: s.Service.Name, Groups: []rulefmt.RuleGroup{g}}.Chained(limit)
		if err != nil {
			return append(out, spec.Problem{Path: "spec.indicator", Severity: spec.Error,
				Message: fmt.Sprintf("the rules of this SLO cannot be chained for %s: %v", t.Name, err)})
		}
		groups += len(chained.Groups)
		if n := t.MaxGroupsPerTenant; n > 0 && before <= n && groups > n {
			out = append(out, spec.Problem{Path: "metadata.name", Severity: spec.Warning,
				Message: fmt.Sprintf("with this SLO the ruler files hold %d groups, past %s's default of %d per tenant (-ruler.max-rule-groups-per-tenant): raise the tenant's limit or split the specs across tenants", groups, t.Name, n)})
		}
		return out
	}, nil
}
