// Package controller runs inferslo inside a cluster: InferenceSLO objects
// are one more source of specs for the same front end (spec), model and
// backends (compiler) that `inferslo compile` runs. It holds the
// CustomResourceDefinition generated from the shorthand's Go types, the
// objects a spec yields (the PrometheusRule and ScaledObjects compile
// writes, byte for byte), the reconciler that applies them and the
// validating admission handler that refuses a spec with validate's message.
package controller

import (
	"embed"
	"fmt"
	"reflect"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/engine"
)

// Group, Version, Kind and Resource name InferenceSLO objects in a cluster.
// The file form's apiVersion is spec.ShorthandAPIVersion; the cluster's is
// APIVersion, since API groups must be DNS names.
const (
	Group      = "inferslo.dev"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	Kind       = spec.ShorthandKind
	Resource   = "inferenceslos"
)

// CRDPath is the committed CustomResourceDefinition, relative to this
// package; `kubectl apply -f compiler/kube/controller/crds/` installs it.
const CRDPath = "crds/" + Group + "_" + Resource + ".yaml"

//go:embed crds/*.yaml
var committed embed.FS

// CommittedCRD is the CustomResourceDefinition as committed (and embedded).
func CommittedCRD() ([]byte, error) { return committed.ReadFile(CRDPath) }

// CRD generates the InferenceSLO CustomResourceDefinition from the
// shorthand's Go types (spec.ShorthandSpec): each field's YAML name and type
// make a structural schema. Required fields and values are left to spec,
// so that a spec missing one is refused by the admission webhook with
// validate's located message, as on the command line. The custom engine's catalog entry (spec.metrics) is kept whole for spec to
// check, as the file form does.
func CRD() ([]byte, error) {
	specSchema, err := schemaOf(reflect.TypeOf(spec.ShorthandSpec{}), nil)
	if err != nil {
		return nil, fmt.Errorf("inferenceslo crd: %w", err)
	}
	condition := object(map[string]any{
		"type":               str(),
		"status":             map[string]any{"type": "string", "enum": []any{"True", "False", "Unknown"}},
		"reason":             str(),
		"message":            str(),
		"observedGeneration": map[string]any{"type": "integer", "format": "int64"},
		"lastTransitionTime": map[string]any{"type": "string", "format": "date-time"},
	}, "type", "status")
	status := object(map[string]any{
		"observedGeneration": map[string]any{"type": "integer", "format": "int64"},
		"conditions": map[string]any{
			"type":                       "array",
			"items":                      condition,
			"x-kubernetes-list-type":     "map",
			"x-kubernetes-list-map-keys": []any{"type"},
		},
		"objects": map[string]any{"type": "array", "items": str()},
	})
	root := object(map[string]any{
		"apiVersion": str(),
		"kind":       str(),
		"metadata":   map[string]any{"type": "object"},
		"spec":       specSchema,
		"status":     status,
	}, "spec")
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":        Resource + "." + Group,
			"annotations": map[string]any{"inferslo.dev/generated-from": "github.com/inferslo/inferslo/spec.ShorthandSpec"},
		},
		"spec": map[string]any{
			"group": Group,
			"names": map[string]any{
				"kind":       Kind,
				"listKind":   Kind + "List",
				"plural":     Resource,
				"singular":   strings.ToLower(Kind),
				"shortNames": []any{"islo"},
				"categories": []any{"inferslo"},
			},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name":         Version,
				"served":       true,
				"storage":      true,
				"schema":       map[string]any{"openAPIV3Schema": root},
				"subresources": map[string]any{"status": map[string]any{}},
				"additionalPrinterColumns": []any{
					map[string]any{"name": "Engine", "type": "string", "jsonPath": ".spec.engine"},
					map[string]any{"name": "Window", "type": "string", "jsonPath": ".spec.window"},
					map[string]any{"name": "Ready", "type": "string", "jsonPath": `.status.conditions[?(@.type=="Ready")].status`},
					map[string]any{"name": "Reason", "type": "string", "jsonPath": `.status.conditions[?(@.type=="Ready")].reason`},
				},
			}},
		},
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, fmt.Errorf("inferenceslo crd: %w", err)
	}
	return append([]byte("# DO NOT EDIT: generated from spec.ShorthandSpec by compiler/kube/controller (go test ./compiler/kube/controller -run CRD -update).\n"), out...), nil
}

func str() map[string]any { return map[string]any{"type": "string"} }

func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		o["required"] = req
	}
	return o
}

// schemaOf is the structural schema of a Go type as YAML decodes it; seen
// guards against recursive types, which a structural schema cannot express.
func schemaOf(t reflect.Type, seen []reflect.Type) (map[string]any, error) {
	if t == reflect.TypeOf(engine.Engine{}) {
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), seen)
	case reflect.String:
		return str(), nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice:
		items, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: map keys must be strings", t)
		}
		values, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, nil
	case reflect.Struct:
		for _, s := range seen {
			if s == t {
				return nil, fmt.Errorf("%s is recursive", t)
			}
		}
		seen = append(seen, t)
		props := map[string]any{}
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				return nil, fmt.Errorf("%s.%s has no yaml name", t, f.Name)
			}
			s, err := schemaOf(f.Type, seen)
			if err != nil {
				return nil, err
			}
			props[name] = s
		}
		return object(props), nil
	}
	return nil, fmt.Errorf("%s: no schema for kind %s", t, t.Kind())
}
