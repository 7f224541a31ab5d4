// Package controller runs inferslo inside a cluster: InferenceSLO objects
// are one more source of specs for the same front end (spec), model and
// backends (compiler) that `inferslo compile` runs. It holds the
// CustomResourceDefinitions (generated from the decoders' Go types by its
// tests, crd_gen_test.go), the
// objects a spec yields (the PrometheusRule and ScaledObjects compile
// writes, byte for byte), the reconciler that applies them and the
// validating admission handler that refuses a spec with validate's message.
package controller

import (
	"embed"
	"reflect"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferslo/inferslo/spec"
)

// Group, Version, Kind and Resource name InferenceSLO objects in a cluster.
// The file form's apiVersion is spec.ShorthandAPIVersion; the cluster's is
// APIVersion (spec.ShorthandClusterAPIVersion), since API groups must be DNS
// names.
const (
	Group      = "inferslo.dev"
	Version    = "v1alpha1"
	APIVersion = spec.ShorthandClusterAPIVersion
	Kind       = spec.ShorthandKind
	Resource   = "inferenceslos"
)

// CRDPath is the committed InferenceSLO CustomResourceDefinition, relative
// to this package; `kubectl apply -f compiler/kube/controller/crds/`
// installs it with the OpenSLO kinds'.
const CRDPath = "crds/" + Group + "_" + Resource + ".yaml"

//go:embed crds/*.yaml
var committed embed.FS

// CommittedCRDs are every committed CustomResourceDefinition, in the order
// of Kinds.
func CommittedCRDs() ([][]byte, error) {
	var out [][]byte
	for _, k := range Kinds {
		data, err := committed.ReadFile(k.Path())
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// KindDef is a kind the controller defines in the cluster: its names and
// the Go type of its spec, read through the tag its decoder reads (yaml for
// the shorthand, json for go-sdk's OpenSLO types).
type KindDef struct {
	Group, Version, Kind, Plural string
	ShortNames                   []string
	Spec                         reflect.Type
	Tag                          string
	// Columns are extra printer columns (name, JSON path) before Ready.
	Columns [][2]string
}

// Path is where the kind's CRD is committed, relative to this package.
func (k KindDef) Path() string { return "crds/" + k.Group + "_" + k.Plural + ".yaml" }

// GVK is the kind's group, version and kind.
func (k KindDef) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
}

func openSLOKind(kind, plural string, t reflect.Type, columns ...[2]string) KindDef {
	return KindDef{Group: spec.OpenSLOGroup, Version: spec.OpenSLOVersion, Kind: kind, Plural: plural,
		Spec: t, Tag: "json", Columns: columns}
}

// Kinds are the InferenceSLO kind and the OpenSLO v1 kinds spec decodes,
// each generated from the Go type its decoder fills.
var Kinds = []KindDef{
	{Group: Group, Version: Version, Kind: Kind, Plural: Resource, ShortNames: []string{"islo"},
		Spec: reflect.TypeOf(spec.ShorthandSpec{}), Tag: "yaml",
		Columns: [][2]string{{"Engine", ".spec.engine"}, {"Window", ".spec.window"}}},
	openSLOKind("SLO", "slos", reflect.TypeOf(v1.SLOSpec{}), [2]string{"Service", ".spec.service"}),
	openSLOKind("SLI", "slis", reflect.TypeOf(v1.SLISpec{})),
	openSLOKind("AlertPolicy", "alertpolicies", reflect.TypeOf(v1.AlertPolicySpec{})),
	openSLOKind("AlertCondition", "alertconditions", reflect.TypeOf(v1.AlertConditionSpec{})),
	openSLOKind("AlertNotificationTarget", "alertnotificationtargets", reflect.TypeOf(v1.AlertNotificationTargetSpec{})),
	openSLOKind("Service", "services", reflect.TypeOf(v1.ServiceSpec{})),
	openSLOKind("DataSource", "datasources", reflect.TypeOf(v1.DataSourceSpec{})),
}
