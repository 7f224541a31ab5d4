// Package argo is the Argo Rollouts backend: per service an
// AnalysisTemplate that gates a canary on the error budget its SLOs have
// left, through the query and threshold of `inferslo budget`.
package argo

import (
	"bytes"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
)

// Path is where a service's AnalysisTemplate goes in the output folder.
func Path(service string) string { return "argo/" + service + ".analysistemplate.yaml" }

// Args of every template: the Prometheus address and the gate, a share
// of the budget (0.1 for 10%), which a Rollout may pass its own of.
const (
	ArgAddress   = "prometheus-address"
	ArgFailBelow = "fail-below"
)

// SuccessCondition passes a measurement while the server answered a budget
// for every group and none is below the gate: an absent series is a
// failure, not a pass (all() of nothing is true).
const SuccessCondition = "len(result) > 0 && all(result, {# >= {{args." + ArgFailBelow + "}}})"

// Backend writes the AnalysisTemplates; FailBelow is the default gate, a
// share of the budget.
type Backend struct {
	FailBelow float64
}

func (Backend) Name() string     { return "argo rollouts analysis templates" }
func (Backend) PerService() bool { return true }

func (b Backend) Build(set model.Set) (artifact.Set, error) {
	if b.FailBelow < 0 || b.FailBelow > 1 {
		return nil, fmt.Errorf("the gate %v is not a share of the budget from 0 to 1", b.FailBelow)
	}
	var out artifact.Set
	for _, svc := range set.PerService() {
		data, err := b.template(svc)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", svc.Name, err)
		}
		out = append(out, artifact.File{Path: Path(svc.Name), Data: data})
	}
	return out, nil
}

type arg struct {
	Name  string  `yaml:"name"`
	Value *string `yaml:"value,omitempty"`
}

type metric struct {
	Name             string   `yaml:"name"`
	Count            int      `yaml:"count"`
	FailureLimit     int      `yaml:"failureLimit"`
	SuccessCondition string   `yaml:"successCondition"`
	Provider         provider `yaml:"provider"`
}

type provider struct {
	Prometheus struct {
		Address string `yaml:"address"`
		Query   string `yaml:"query"`
	} `yaml:"prometheus"`
}

type template struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		Args    []arg    `yaml:"args"`
		Metrics []metric `yaml:"metrics"`
	} `yaml:"spec"`
}

// ObjectName is the AnalysisTemplate of a service.
func ObjectName(service string) string { return "inferslo-" + service + "-error-budget" }

// template is one service's AnalysisTemplate: one metric per SLO, measured
// once, failing the analysis at the first failed measurement. The
// Prometheus address has no default: the Rollout passes it.
func (b Backend) template(svc model.ServiceSLOs) ([]byte, error) {
	var t template
	t.APIVersion, t.Kind = "argoproj.io/v1alpha1", "AnalysisTemplate"
	t.Metadata.Name = ObjectName(svc.Name)
	t.Metadata.Labels = map[string]string{"app.kubernetes.io/managed-by": "inferslo"}
	gate := strconv.FormatFloat(b.FailBelow, 'f', -1, 64)
	t.Spec.Args = []arg{{Name: ArgAddress}, {Name: ArgFailBelow, Value: &gate}}
	for _, slo := range svc.SLOs {
		m := metric{Name: slo.Name, Count: 1, FailureLimit: 0, SuccessCondition: SuccessCondition}
		m.Provider.Prometheus.Address = "{{args." + ArgAddress + "}}"
		m.Provider.Prometheus.Query = model.BudgetQuery(slo)
		t.Spec.Metrics = append(t.Spec.Metrics, m)
	}
	var buf bytes.Buffer
	buf.WriteString(artifact.YAMLHeader(model.Sources(svc.SLOs)))
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(t); err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	return buf.Bytes(), nil
}
