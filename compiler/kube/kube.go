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
	"maps"
	"regexp"
	"slices"
	"strings"

	prommodel "github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/ruler"
	"github.com/inferslo/inferslo/compiler/rules"
)

// MaxRuleSize is the largest marshalled PrometheusRule spec the operator
// accepts: half of a 1 MiB Secret, because the rules end up in a ConfigMap
// with other files.
const MaxRuleSize = 512 * 1024

// ServiceRules are the rule groups of one service and the spec files they
// came from (for the generated-file header).
type ServiceRules = rules.Service

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

// RulerOptions shape the rule-group files for Mimir, Cortex, Thanos and
// vmalert.
type RulerOptions struct {
	// PartialResponseStrategy ("abort" or "warn") is set on every group. It
	// is a Thanos field: Prometheus and mimirtool reject files that carry it,
	// so leave it empty for them.
	PartialResponseStrategy string
	// Target is the evaluator the files are for; the zero Target is
	// Prometheus. vmalert's expressions are checked by its own MetricsQL
	// parser.
	Target ruler.Target
	// MaxRulesPerGroup chains larger groups into parts of at most this
	// many rules (see rules.Service.Chained); 0 keeps them whole.
	MaxRulesPerGroup int
}

type objectMeta struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
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

// Objects writes PrometheusRule objects with one set of Options. Only the
// name differs between the objects' heads (apiVersion, kind, metadata), so
// the head is encoded once and each object's name, a plain YAML scalar,
// written into it. Safe for concurrent use.
type Objects struct {
	opts Options
	// err is what is wrong with opts.
	err error
	// before and after are the encoded head around a name's text; nil
	// when the head's encoding could not be cut there.
	before, after []byte
}

// NewObjects returns the Objects of opts; when opts are wrong, their
// PrometheusRules says so.
func NewObjects(opts Options) *Objects {
	o := &Objects{opts: opts, err: opts.check()}
	if o.err != nil {
		return o
	}
	const stand = "inferslo-x"
	head, err := o.encodeHead(stand)
	line := []byte("\n  name: " + stand + "\n")
	if i := bytes.Index(head, line); err == nil && i >= 0 && bytes.Count(head, line) == 1 {
		o.before, o.after = head[:i+len(line)-len(stand)-1], head[i+len(line)-1:]
	}
	return o
}

// PrometheusRules returns one validated PrometheusRule per service.
func (o *Objects) PrometheusRules(services []ServiceRules) (artifact.Set, error) {
	if o.err != nil {
		return nil, o.err
	}
	return perService(services, PrometheusRulePath, o.file)
}

// plainName is an object name yaml.v3 writes as it is: ObjectName's prefix
// makes it no number, boolean, null or timestamp, and it has no space,
// quote or other indicator.
var plainName = regexp.MustCompile(`^inferslo-[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// head is the object's apiVersion, kind and metadata as yaml.v3 encodes
// them.
func (o *Objects) head(name string) ([]byte, error) {
	if o.before == nil || !plainName.MatchString(name) {
		return o.encodeHead(name)
	}
	b := make([]byte, 0, len(o.before)+len(name)+len(o.after))
	return append(append(append(b, o.before...), name...), o.after...), nil
}

func (o *Objects) encodeHead(name string) ([]byte, error) {
	labels := map[string]string{"app.kubernetes.io/managed-by": "inferslo"}
	maps.Copy(labels, o.opts.Labels)
	return encode(struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   objectMeta `yaml:"metadata"`
	}{"monitoring.coreos.com/v1", "PrometheusRule", objectMeta{Name: name, Namespace: o.opts.Namespace, Labels: labels}})
}

// RulerGroups returns one validated rule-group file per service.
func RulerGroups(services []ServiceRules, opts RulerOptions) (artifact.Set, error) {
	if !strategy.MatchString(opts.PartialResponseStrategy) {
		return nil, fmt.Errorf("partial response strategy %q is not abort or warn", opts.PartialResponseStrategy)
	}
	if opts.MaxRulesPerGroup < 0 {
		return nil, fmt.Errorf("max rules per group %d is negative", opts.MaxRulesPerGroup)
	}
	return perService(services, RulerPath, func(s ServiceRules) ([]byte, error) { return rulerFile(s, opts) })
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

// perService is one validated file per service, in name order, at path.
func perService(services []ServiceRules, path func(service string) string, file func(ServiceRules) ([]byte, error)) (artifact.Set, error) {
	var files artifact.Set
	for _, s := range slices.SortedStableFunc(slices.Values(services), func(a, b ServiceRules) int { return strings.Compare(a.Name, b.Name) }) {
		data, err := file(s)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", s.Name, err)
		}
		files = append(files, artifact.File{Path: path(s.Name), Data: data})
	}
	return files, files.Check()
}

func (o *Objects) file(s ServiceRules) ([]byte, error) {
	opts := o.opts
	name := ObjectName(s.Name)
	if len(name) > 253 || !dnsSubdomain.MatchString(name) {
		return nil, fmt.Errorf("object name %q is not a DNS subdomain", name)
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	b, err := header(s.Sources)
	if err != nil {
		return nil, err
	}
	meta, err := o.head(name)
	if err != nil {
		return nil, err
	}
	b = append(b, meta...)
	b = append(b, "spec:\n"...)
	start := len(b)
	style := rules.GroupStyle{LabelsBeforeRules: true, PartialResponseStrategy: opts.PartialResponseStrategy}
	b = s.AppendEncoded(b, 2, style)
	// The operator's webhook measures the spec without the Thanos field.
	size := len(b) - start
	if style.PartialResponseStrategy != "" {
		size = len(s.AppendEncoded(nil, 2, rules.GroupStyle{LabelsBeforeRules: true}))
	}
	if size > MaxRuleSize {
		return nil, fmt.Errorf("rule spec is %d bytes, above the operator's limit of %d", size, MaxRuleSize)
	}
	return b, nil
}

// rulerFile is a rule file as Prometheus and mimirtool load it, plus the
// Thanos field when asked for, its groups chained within the target's
// limit. A chained file says, in a comment under the header, how late its
// alerts may read what an earlier part recorded.
func rulerFile(s ServiceRules, opts RulerOptions) ([]byte, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	b, err := header(s.Sources)
	if err != nil {
		return nil, err
	}
	s, chain, err := s.Chained(opts.MaxRulesPerGroup)
	if err != nil {
		return nil, err
	}
	if err := opts.Target.EvaluatesGroups(s.Groups); err != nil {
		return nil, err
	}
	style := rules.GroupStyle{PartialResponseStrategy: opts.PartialResponseStrategy}
	if chain.Split == 0 {
		// The service's rule file as it is, header and all.
		return s.File(style), nil
	}
	b = fmt.Appendf(b, "# %d groups over %d rules are chained into parts (<group>/2, ...): a part reads what an earlier one\n"+
		"# records up to one evaluation interval late, so an alert fires up to %s later than in one group.\n",
		chain.Split, opts.MaxRulesPerGroup, prommodel.Duration(chain.Lag))
	return s.AppendEncoded(b, 0, style), nil
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

func header(sources []string) ([]byte, error) {
	if len(sources) == 0 {
		return nil, fmt.Errorf("no source spec files to name in the header")
	}
	return []byte(artifact.YAMLHeader(sources)), nil
}
