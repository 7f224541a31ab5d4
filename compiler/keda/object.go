package keda

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/artifact"
)

// The ScaledObject fields inferslo writes, in the order of KEDA's CRD
// (keda.sh/v1alpha1 at v2.20). Importing KEDA's API module would drag in
// controller-runtime and a pinned Kubernetes; the CRD schema test keeps these
// structs honest instead.
type scaledObject struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       spec       `yaml:"spec"`
}

type objectMeta struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type spec struct {
	ScaleTargetRef scaleTarget `yaml:"scaleTargetRef"`
	// Both counts are always written: KEDA's defaults (0 and 100) are not
	// what a GPU fleet wants by accident.
	MinReplicaCount int       `yaml:"minReplicaCount"`
	MaxReplicaCount int       `yaml:"maxReplicaCount"`
	Fallback        *fallback `yaml:"fallback,omitempty"`
	Advanced        *advanced `yaml:"advanced,omitempty"`
	Triggers        []trigger `yaml:"triggers"`
}

type scaleTarget struct {
	APIVersion string `yaml:"apiVersion,omitempty"`
	Kind       string `yaml:"kind,omitempty"`
	Name       string `yaml:"name"`
}

type fallback struct {
	FailureThreshold int    `yaml:"failureThreshold"`
	Replicas         int    `yaml:"replicas"`
	Behavior         string `yaml:"behavior,omitempty"`
}

type advanced struct {
	HorizontalPodAutoscalerConfig *hpaConfig `yaml:"horizontalPodAutoscalerConfig,omitempty"`
}

type hpaConfig struct {
	Name     string    `yaml:"name,omitempty"`
	Behavior *behavior `yaml:"behavior,omitempty"`
}

type behavior struct {
	ScaleUp   *scalingRules `yaml:"scaleUp,omitempty"`
	ScaleDown *scalingRules `yaml:"scaleDown,omitempty"`
}

type scalingRules struct {
	StabilizationWindowSeconds int `yaml:"stabilizationWindowSeconds"`
}

type trigger struct {
	Name       string `yaml:"name"`
	Type       string `yaml:"type"`
	MetricType string `yaml:"metricType,omitempty"`
	// Metadata values are strings, as the CRD requires ("0.2", never 0.2);
	// the YAML encoder quotes the ones that would read as numbers.
	Metadata          map[string]string `yaml:"metadata"`
	AuthenticationRef *authRef          `yaml:"authenticationRef,omitempty"`
}

type authRef struct {
	Name string `yaml:"name"`
	Kind string `yaml:"kind,omitempty"`
}

func marshal(obj scaledObject, sources []string) ([]byte, error) {
	if len(sources) == 0 {
		return nil, fmt.Errorf("no source spec files to name in the header")
	}
	var buf bytes.Buffer
	buf.WriteString(artifact.YAMLHeader(sources))
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(obj); err != nil {
		return nil, fmt.Errorf("encode ScaledObject: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode ScaledObject: %w", err)
	}
	return buf.Bytes(), nil
}
