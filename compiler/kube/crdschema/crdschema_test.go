package crdschema

import (
	"strings"
	"testing"
)

// widgetCRD is a minimal CRD exercising the rewrites: a nullable field, a
// nested object with properties, and one that preserves unknown fields.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  group: example.dev
  names: {kind: Widget}
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              note: {type: string, nullable: true}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties:
                  known: {type: string}
`

func TestCompileAndValidate(t *testing.T) {
	tests := []struct {
		name    string
		strict  bool
		doc     string
		wantErr string // empty: valid
	}{
		{"a complete widget is valid", true, "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2}\n", ""},
		{"a null nullable field is valid", true, "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2, note: null}\n", ""},
		{"unknown fields pass where the schema preserves them", true, "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2, extra: {anything: 1}}\n", ""},
		{"an unknown spec field fails in strict mode", true, "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2, colour: red}\n", "colour"},
		{"an unknown spec field passes when not strict", false, "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2, colour: red}\n", ""},
		{"the wrong apiVersion fails", true, "apiVersion: example.dev/v2\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2}\n", "apiVersion"},
		{"a missing name fails", true, "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {}\nspec: {size: 2}\n", "name"},
		{"a size below the minimum fails", true, "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 0}\n", "minimum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([]byte(widgetCRD), "v1", tt.strict)
			if err != nil {
				t.Fatal(err)
			}
			err = Validate(s, []byte(tt.doc))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want valid", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
	if _, err := Compile([]byte(widgetCRD), "v9", true); err == nil {
		t.Error("Compile() accepted a version the CRD lacks")
	}
}
