package lint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/kube/crdschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sarifSchema is the SARIF 2.1.0 schema (testdata/sarif, descriptions
// stripped; its $comment names the source), formats asserted.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c, err := crdschema.Load("testdata/sarif/sarif-schema-2.1.0.json", "")
	if err != nil {
		t.Fatal(err)
	}
	c.AssertFormat()
	s, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sarifOf lints every fixture in the folders and writes the SARIF log.
func sarifOf(t *testing.T, dirs ...string) []byte {
	t.Helper()
	var sources []Source
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || strings.HasSuffix(e.Name(), ".want") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			sources = append(sources, Source{Name: filepath.ToSlash(filepath.Join(dir, e.Name())), Data: data})
		}
	}
	res, err := Run(sources, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, "sarif", res); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSARIFFollowsTheSARIF210Schema(t *testing.T) {
	schema := sarifSchema(t)
	tests := []struct {
		name string
		dirs []string
	}{
		{"a log with findings of every fixture is valid", []string{"testdata/bad"}},
		{"a log without findings is valid", []string{"testdata/clean"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := sarifOf(t, tt.dirs...)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(inst); err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
		})
	}
}

// The schema check can fail: logs broken the ways a writer could break
// them are rejected.
func TestTheSARIFSchemaRejectsBrokenLogs(t *testing.T) {
	schema := sarifSchema(t)
	log := string(sarifOf(t, "testdata/bad"))
	broken := map[string]string{
		"an unknown level":      strings.Replace(log, `"level": "error"`, `"level": "fatal"`, 1),
		"another version":       strings.Replace(log, `"version": "2.1.0"`, `"version": "2.0.0"`, 1),
		"a line number of zero": strings.Replace(log, `"startLine": 8`, `"startLine": 0`, 1),
		"a rule without an id":  strings.Replace(log, `"id": "`, `"name": "`, 1),
	}
	for name, doc := range broken {
		if doc == log {
			t.Fatalf("%s: the mutation did not apply", name)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(inst) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
