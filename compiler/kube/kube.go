// Package kube ships the generated Prometheus rules in the forms Kubernetes
// and multi-tenant rulers load: a prometheus-operator PrometheusRule per
// service, and plain rule-group files for the Mimir and Thanos rulers.
//
// Output paths, relative to the output folder:
//
//	kubernetes/<service>.prometheusrule.yaml  PrometheusRule "inferslo-<service>"
//	ruler/<service>.yaml                      rule groups; mimirtool takes the
//	                                          file name as the rule namespace
package kube

import (
	"bytes"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// MaxRuleSize is the largest marshalled PrometheusRule spec the operator
// accepts: half of a 1 MiB Secret, because the rules end up in a ConfigMap
// with other files.
const MaxRuleSize = 512 * 1024

// ServiceRules are the rule groups of one service and the spec files they
// came from (for the generated-file header).
type ServiceRules struct {
	Service string
	Groups  []rulefmt.RuleGroup
	Sources []string
}

// FromSet collects every service's rule groups from the rules backend.
func FromSet(set model.Set) ([]ServiceRules, error) {
	var out []ServiceRules
	for _, service := range set.Services() {
		groups, sources, err := rules.ServiceGroups(set, service)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", service, err)
		}
		out = append(out, ServiceRules{Service: service, Groups: groups, Sources: sources})
	}
	return out, nil
}

// Options shape the PrometheusRule objects.
type Options struct {
	// Namespace of the objects; empty leaves it to kubectl's context.
	Namespace string
	// Labels are added to every object, so that a Prometheus ruleSelector
	// (kube-prometheus-stack: release=<helm release>) picks them up.
	Labels map[string]string
	// PartialResponseStrategy ("abort" or "warn") is set on every group; only
	// the operator's ThanosRuler reads it, Prometheus ignores it.
	PartialResponseStrategy string
}

// RulerOptions shape the rule-group files for Mimir and Thanos.
type RulerOptions struct {
	// PartialResponseStrategy ("abort" or "warn") is set on every group. It
	// is a Thanos field: Prometheus and mimirtool reject files that carry it,
	// so leave it empty for them.
	PartialResponseStrategy string
}

// group is a rulefmt.RuleGroup plus the Thanos field, in the order the
// PrometheusRule CRD lists them.
type group struct {
	Name                    string            `yaml:"name" json:"name"`
	Interval                string            `yaml:"interval,omitempty" json:"interval,omitempty"`
	QueryOffset             string            `yaml:"query_offset,omitempty" json:"query_offset,omitempty"`
	Limit                   int               `yaml:"limit,omitempty" json:"limit,omitempty"`
	Labels                  map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	PartialResponseStrategy string            `yaml:"partial_response_strategy,omitempty" json:"partial_response_strategy,omitempty"`
	Rules                   []rulefmt.Rule    `yaml:"rules" json:"rules"`
}

type ruleSpec struct {
	Groups []group `yaml:"groups"`
}

type objectMeta struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type prometheusRule struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       ruleSpec   `yaml:"spec"`
}

// PrometheusRulePath is where a service's PrometheusRule goes.
func PrometheusRulePath(service string) string {
	return "kubernetes/" + service + ".prometheusrule.yaml"
}

// RulerPath is where a service's ruler file goes; its base name is the
// Mimir rule namespace.
func RulerPath(service string) string { return "ruler/" + service + ".yaml" }

// ObjectName is the PrometheusRule's name; the prefix keeps it apart from
// rules a team already keeps under the service's own name.
func ObjectName(service string) string { return "inferslo-" + service }

var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	labelName    = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	labelValue   = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`)
	// strategy is the CRD's pattern for partial_response_strategy.
	strategy = regexp.MustCompile(`^(?i)(abort|warn)?$`)
)

// PrometheusRules returns one validated PrometheusRule per service.
func PrometheusRules(services []ServiceRules, opts Options) (artifact.Set, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	var files artifact.Set
	for _, s := range sorted(services) {
		data, err := prometheusRuleFile(s, opts)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", s.Service, err)
		}
		files = append(files, artifact.File{Path: PrometheusRulePath(s.Service), Data: data})
	}
	return files, files.Check()
}

// RulerGroups returns one validated rule-group file per service.
func RulerGroups(services []ServiceRules, opts RulerOptions) (artifact.Set, error) {
	if !strategy.MatchString(opts.PartialResponseStrategy) {
		return nil, fmt.Errorf("partial response strategy %q is not abort or warn", opts.PartialResponseStrategy)
	}
	var files artifact.Set
	for _, s := range sorted(services) {
		data, err := rulerFile(s, opts)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", s.Service, err)
		}
		files = append(files, artifact.File{Path: RulerPath(s.Service), Data: data})
	}
	return files, files.Check()
}

func (o Options) check() error {
	if o.Namespace != "" && (len(o.Namespace) > 63 || !dnsLabel.MatchString(o.Namespace)) {
		return fmt.Errorf("namespace %q is not a DNS label", o.Namespace)
	}
	for k, v := range o.Labels {
		if len(k) > 316 || !labelName.MatchString(k) {
			return fmt.Errorf("label name %q is not a Kubernetes label key", k)
		}
		if len(v) > 63 || !labelValue.MatchString(v) {
			return fmt.Errorf("label %s: value %q is not a Kubernetes label value", k, v)
		}
	}
	if !strategy.MatchString(o.PartialResponseStrategy) {
		return fmt.Errorf("partial response strategy %q is not abort or warn", o.PartialResponseStrategy)
	}
	return nil
}

func sorted(services []ServiceRules) []ServiceRules {
	out := append([]ServiceRules(nil), services...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Service < out[j].Service })
	return out
}

func prometheusRuleFile(s ServiceRules, opts Options) ([]byte, error) {
	name := ObjectName(s.Service)
	if len(name) > 253 || !dnsSubdomain.MatchString(name) {
		return nil, fmt.Errorf("object name %q is not a DNS subdomain", name)
	}
	labels := map[string]string{"app.kubernetes.io/managed-by": "inferslo"}
	for k, v := range opts.Labels {
		labels[k] = v
	}
	groups := convert(s.Groups, opts.PartialResponseStrategy)
	if err := checkLikeOperator(groups); err != nil {
		return nil, err
	}
	obj := prometheusRule{
		APIVersion: "monitoring.coreos.com/v1",
		Kind:       "PrometheusRule",
		Metadata:   objectMeta{Name: name, Namespace: opts.Namespace, Labels: labels},
		Spec:       ruleSpec{Groups: groups},
	}
	return marshal(obj, s.Sources)
}

func rulerFile(s ServiceRules, opts RulerOptions) ([]byte, error) {
	groups := convert(s.Groups, opts.PartialResponseStrategy)
	// The file without the Thanos field is exactly what Prometheus and
	// mimirtool load; check that form.
	if err := checkRuleFile(convert(s.Groups, "")); err != nil {
		return nil, err
	}
	return marshal(ruleSpec{Groups: groups}, s.Sources)
}

func convert(in []rulefmt.RuleGroup, partialResponse string) []group {
	out := make([]group, len(in))
	for i, g := range in {
		out[i] = group{
			Name:                    g.Name,
			Limit:                   g.Limit,
			Labels:                  g.Labels,
			PartialResponseStrategy: partialResponse,
			Rules:                   g.Rules,
		}
		if g.Interval != 0 {
			out[i].Interval = g.Interval.String()
		}
		if g.QueryOffset != nil {
			out[i].QueryOffset = g.QueryOffset.String()
		}
	}
	return out
}

// checkLikeOperator repeats the prometheus-operator admission webhook: group
// names are unique (the CRD lists groups as a map keyed by name), the spec
// without partial_response_strategy is a valid rule file, and it fits the
// ConfigMap budget.
func checkLikeOperator(groups []group) error {
	blank := make([]group, len(groups))
	for i, g := range groups {
		g.PartialResponseStrategy = ""
		blank[i] = g
	}
	content, err := encode(ruleSpec{Groups: blank})
	if err != nil {
		return err
	}
	if len(content) > MaxRuleSize {
		return fmt.Errorf("rule spec is %d bytes, above the operator's limit of %d", len(content), MaxRuleSize)
	}
	return checkRuleFile(blank)
}

func checkRuleFile(groups []group) error {
	seen := map[string]bool{}
	for _, g := range groups {
		if seen[g.Name] {
			return fmt.Errorf("rule group %q appears twice", g.Name)
		}
		seen[g.Name] = true
	}
	content, err := encode(ruleSpec{Groups: groups})
	if err != nil {
		return err
	}
	_, errs := rulefmt.Parse(content, false, prommodel.UTF8Validation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("rules do not validate: %s", strings.Join(msgs, "; "))
	}
	return nil
}

func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	return buf.Bytes(), nil
}

func marshal(v any, sources []string) ([]byte, error) {
	body, err := encode(v)
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("no source spec files to name in the header")
	}
	return append([]byte(artifact.YAMLHeader(sources)), body...), nil
}
