// Package crdschema turns a CustomResourceDefinition's openAPIV3Schema into a
// JSON Schema, so tests can check generated Kubernetes objects the way the API
// server would, offline. Strict mode closes every object that lists its
// properties, as `kubectl apply --validate=strict` rejects unknown fields
// instead of pruning them silently. Load reads the other JSON Schemas the
// tests hold outputs to (Grafana's, SARIF, inferslo's own JSON reports).
package crdschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// Compile builds the schema of one version of a CRD (YAML or JSON bytes).
// The root also pins apiVersion and kind and requires a metadata.name that is
// a DNS subdomain, which the API server checks outside the CRD schema.
func Compile(crd []byte, version string, strict bool) (*jsonschema.Schema, error) {
	js, err := yaml.YAMLToJSON(crd)
	if err != nil {
		return nil, fmt.Errorf("read crd: %w", err)
	}
	var doc struct {
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind string `json:"kind"`
			} `json:"names"`
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, fmt.Errorf("read crd: %w", err)
	}
	var root map[string]any
	for _, v := range doc.Spec.Versions {
		if v.Name == version {
			root = v.Schema.OpenAPIV3Schema
		}
	}
	if root == nil {
		return nil, fmt.Errorf("crd %s has no version %s", doc.Spec.Names.Kind, version)
	}
	rewrite(root, strict)
	props, _ := root["properties"].(map[string]any)
	if props == nil {
		return nil, fmt.Errorf("crd %s: schema has no properties", doc.Spec.Names.Kind)
	}
	props["apiVersion"] = map[string]any{"const": doc.Spec.Group + "/" + version}
	props["kind"] = map[string]any{"const": doc.Spec.Names.Kind}
	props["metadata"] = objectMeta(strict)
	root["required"] = withRequired(root["required"], "apiVersion", "kind", "metadata")
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"

	// Round-trip through JSON so numbers arrive as json.Number, which the
	// validator expects for exact comparisons.
	b, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "mem:///crd.json"
	if err := c.AddResource(url, schemaDoc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// CompileFile builds the schema of one version of the CRD in a file.
func CompileFile(path, version string, strict bool) (*jsonschema.Schema, error) {
	crd, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Compile(crd, version, strict)
}

// ValidateFiles checks every manifest matching a glob and returns them by
// path; an error names the first file that fails.
func ValidateFiles(s *jsonschema.Schema, glob string) (map[string][]byte, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := Validate(s, data); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(p), err)
		}
		out[p] = data
	}
	return out, nil
}

// Validate checks a YAML (or JSON) manifest against a compiled schema.
func Validate(s *jsonschema.Schema, manifest []byte) error {
	js, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	return s.Validate(v)
}

const dnsSubdomain = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`

func objectMeta(strict bool) map[string]any {
	stringMap := map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	m := map[string]any{
		"type":     "object",
		"required": []any{"name"},
		"properties": map[string]any{
			"name":        map[string]any{"type": "string", "maxLength": 253, "pattern": dnsSubdomain},
			"namespace":   map[string]any{"type": "string", "maxLength": 63, "pattern": `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`},
			"labels":      stringMap,
			"annotations": stringMap,
		},
	}
	if strict {
		m["additionalProperties"] = false
	}
	return m
}

func withRequired(v any, names ...string) []any {
	out, _ := v.([]any)
	have := map[any]bool{}
	for _, n := range out {
		have[n] = true
	}
	for _, n := range names {
		if !have[n] {
			out = append(out, n)
		}
	}
	return out
}

// rewrite turns OpenAPI v3 structural-schema idioms into JSON Schema in
// place: nullable becomes a "null" type, and in strict mode objects with
// listed properties reject others unless they preserve unknown fields.
func rewrite(node any, strict bool) {
	m, ok := node.(map[string]any)
	if !ok {
		return
	}
	if nullable, _ := m["nullable"].(bool); nullable {
		if t, ok := m["type"].(string); ok {
			m["type"] = []any{t, "null"}
		}
	}
	delete(m, "nullable")
	_, hasProps := m["properties"]
	_, hasAdditional := m["additionalProperties"]
	preserve, _ := m["x-kubernetes-preserve-unknown-fields"].(bool)
	if strict && hasProps && !hasAdditional && !preserve {
		m["additionalProperties"] = false
	}
	for key, v := range m {
		switch key {
		case "properties", "patternProperties", "$defs", "definitions":
			if children, ok := v.(map[string]any); ok {
				for _, child := range children {
					rewrite(child, strict)
				}
			}
		case "items", "additionalProperties", "not":
			rewrite(v, strict)
		case "allOf", "anyOf", "oneOf":
			if list, ok := v.([]any); ok {
				for _, child := range list {
					rewrite(child, strict)
				}
			}
		}
	}
}

// Load adds every JSON Schema file matching glob to a new compiler, each
// under base followed by its file name, so schemas that refer to each other
// by name resolve offline.
func Load(glob, base string) (*jsonschema.Compiler, error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no schema matches %s", glob)
	}
	c := jsonschema.NewCompiler()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if err := c.AddResource(base+filepath.Base(f), doc); err != nil {
			return nil, err
		}
	}
	return c, nil
}
