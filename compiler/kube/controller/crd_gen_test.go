package controller

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/inferslo/inferslo/spec/engine"
	"sigs.k8s.io/yaml"
)

// CRD generates the kind's CustomResourceDefinition from its spec's Go
// type: each field's name under the decoder's tag and its type make a
// structural schema. Required fields and values are left to spec, so that
// a spec missing one is refused by the admission webhook (or reported in
// the status) with validate's located message, as on the command line.
// What spec keeps whole (the custom engine's catalog entry, a metric
// source's query spec, a data source's connection details, OpenSLO's
// string-or-list label values) keeps unknown fields for spec to check.
func (k KindDef) CRD() ([]byte, error) {
	specSchema, err := schemaOf(k.Spec, k.Tag, nil)
	if err != nil {
		return nil, fmt.Errorf("%s crd: %w", strings.ToLower(k.Kind), err)
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
	columns := []any{}
	for _, c := range k.Columns {
		columns = append(columns, map[string]any{"name": c[0], "type": "string", "jsonPath": c[1]})
	}
	columns = append(columns,
		map[string]any{"name": "Ready", "type": "string", "jsonPath": `.status.conditions[?(@.type=="Ready")].status`},
		map[string]any{"name": "Reason", "type": "string", "jsonPath": `.status.conditions[?(@.type=="Ready")].reason`})
	names := map[string]any{
		"kind":       k.Kind,
		"listKind":   k.Kind + "List",
		"plural":     k.Plural,
		"singular":   strings.ToLower(k.Kind),
		"categories": []any{"inferslo"},
	}
	if len(k.ShortNames) > 0 {
		names["shortNames"] = toAny(k.ShortNames)
	}
	from := k.Spec.PkgPath() + "." + k.Spec.Name()
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":        k.Plural + "." + k.Group,
			"annotations": map[string]any{"inferslo.dev/generated-from": from},
		},
		"spec": map[string]any{
			"group": k.Group,
			"names": names,
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name":                     k.Version,
				"served":                   true,
				"storage":                  true,
				"schema":                   map[string]any{"openAPIV3Schema": root},
				"subresources":             map[string]any{"status": map[string]any{}},
				"additionalPrinterColumns": columns,
			}},
		},
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, fmt.Errorf("%s crd: %w", strings.ToLower(k.Kind), err)
	}
	short := strings.TrimPrefix(from, "github.com/inferslo/inferslo/")
	return append([]byte("# DO NOT EDIT: generated from "+short+" by compiler/kube/controller (go test ./compiler/kube/controller -run CRD -update).\n"), out...), nil
}

func str() map[string]any { return map[string]any{"type": "string"} }

func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = toAny(required)
	}
	return o
}

var (
	jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textMarshaler   = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	rawMessage      = reflect.TypeOf(json.RawMessage{})
)

// anything is a node spec keeps whole and checks itself.
func anything() map[string]any { return map[string]any{"x-kubernetes-preserve-unknown-fields": true} }

// schemaOf is the structural schema of a Go type as its decoder reads it
// (field names under tag); seen guards against recursive types, which a
// structural schema cannot express.
func schemaOf(t reflect.Type, tag string, seen []reflect.Type) (map[string]any, error) {
	switch {
	case t == reflect.TypeOf(engine.Engine{}):
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, nil
	case t == rawMessage, t.Kind() == reflect.Interface:
		return anything(), nil
	case t.Implements(textMarshaler):
		// A value written as text (go-sdk's durations).
		return str(), nil
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(jsonUnmarshaler):
		// A value read in more than one shape (go-sdk's label values: a
		// string or a list).
		return anything(), nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), tag, seen)
	case reflect.String:
		return str(), nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice:
		items, err := schemaOf(t.Elem(), tag, seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: map keys must be strings", t)
		}
		if t.Elem().Kind() == reflect.Interface {
			return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, nil
		}
		values, err := schemaOf(t.Elem(), tag, seen)
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
		props := map[string]any{}
		if err := fieldsOf(t, tag, append(seen, t), props); err != nil {
			return nil, err
		}
		return object(props), nil
	}
	return nil, fmt.Errorf("%s: no schema for kind %s", t, t.Kind())
}

// fieldsOf adds a struct's fields to props; an embedded struct with no
// name (go-sdk's reference-or-inline unions) adds its own fields, as
// encoding/json reads them.
func fieldsOf(t reflect.Type, tag string, seen []reflect.Type, props map[string]any) error {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get(tag), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && (tag == "json" || opts == "inline") {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() != reflect.Struct {
				return fmt.Errorf("%s.%s: embedded %s is not a struct", t, f.Name, et)
			}
			if err := fieldsOf(et, tag, seen, props); err != nil {
				return err
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			return fmt.Errorf("%s.%s has no %s name", t, f.Name, tag)
		}
		s, err := schemaOf(f.Type, tag, seen)
		if err != nil {
			return err
		}
		props[name] = s
	}
	return nil
}
