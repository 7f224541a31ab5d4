package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/kube/crdschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonSchemas compiles the documented schemas of the --format json outputs.
func jsonSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c, err := crdschema.Load("../../docs/schemas/*.schema.json", "https://github.com/inferslo/inferslo/docs/schemas/")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Schema{}
	for _, cmd := range []string{"validate", "compile", "plan"} {
		s, err := c.Compile("https://github.com/inferslo/inferslo/docs/schemas/" + cmd + ".schema.json")
		if err != nil {
			t.Fatal(err)
		}
		out[cmd] = s
	}
	return out
}

func TestJSONOutputsFollowTheirSchemas(t *testing.T) {
	schemas := jsonSchemas(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	notOurs := filepath.Join(dir, "not-ours")
	if err := os.MkdirAll(notOurs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notOurs, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		exit int
		// check looks at the decoded document beyond its schema.
		check func(t *testing.T, doc map[string]any)
	}{
		{"validate reports the examples' files and SLOs", []string{"validate", "--format", "json", "../../examples"}, exitOK, func(t *testing.T, doc map[string]any) {
			if doc["ok"] != true || doc["slos"].(float64) < 20 || doc["files"].(float64) < 5 {
				t.Errorf("doc = %v", doc)
			}
		}},
		{"validate puts spec problems in the document, located", []string{"validate", "--format", "json", "../../testdata/bad/alert-labels.yaml"}, exitProblems, func(t *testing.T, doc map[string]any) {
			ps := doc["problems"].([]any)
			if doc["ok"] != false || len(ps) == 0 || doc["error"] != nil {
				t.Fatalf("doc = %v", doc)
			}
			p := ps[0].(map[string]any)
			if !strings.HasSuffix(p["file"].(string), "alert-labels.yaml") || p["line"].(float64) < 1 || p["severity"] != "error" {
				t.Errorf("problem = %v", p)
			}
		}},
		{"validate names a failure that is not a spec problem", []string{"validate", "--format", "json", "does-not-exist.yaml"}, exitProblems, func(t *testing.T, doc map[string]any) {
			if doc["ok"] != false || !strings.Contains(doc["error"].(string), "does-not-exist.yaml") {
				t.Errorf("doc = %v", doc)
			}
		}},
		{"compile lists every file it wrote with its digest", []string{"compile", "--format", "json", "../../examples/chat.yaml", "-o", out}, exitOK, func(t *testing.T, doc map[string]any) {
			files := doc["files"].([]any)
			if doc["written"] != true || len(files) < 3 {
				t.Fatalf("doc = %v", doc)
			}
			for _, f := range files {
				f := f.(map[string]any)
				b, err := os.ReadFile(filepath.Join(out, f["path"].(string)))
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(b)
				if hex.EncodeToString(sum[:]) != f["sha256"] || float64(len(b)) != f["bytes"] {
					t.Errorf("%s: the document does not describe the file written", f["path"])
				}
			}
		}},
		{"compile --check says the folder is up to date", []string{"compile", "--format", "json", "--check", "../../examples/chat.yaml", "-o", out}, exitOK, func(t *testing.T, doc map[string]any) {
			if doc["stale"] != false || doc["written"] != false || doc["diff"] != nil {
				t.Errorf("doc = %v", doc)
			}
		}},
		{"compile --check carries the diff of a stale folder", []string{"compile", "--format", "json", "--check", "../../examples/code-panel.yaml", "-o", out}, exitProblems, func(t *testing.T, doc map[string]any) {
			if doc["stale"] != true || !strings.Contains(doc["diff"].(string), "---") || doc["ok"] != false {
				t.Errorf("doc = %v", doc)
			}
		}},
		{"compile refusing a folder it did not write says why and writes nothing", []string{"compile", "--format", "json", "../../examples/chat.yaml", "-o", notOurs}, exitProblems, func(t *testing.T, doc map[string]any) {
			if doc["written"] != false || doc["error"] == nil {
				t.Errorf("doc = %v", doc)
			}
		}},
		{"plan gives each service's replicas", []string{"plan", "--format", "json", "../../examples/rag-chat.yaml"}, exitOK, func(t *testing.T, doc map[string]any) {
			plans := doc["plans"].([]any)
			if len(plans) != 1 {
				t.Fatalf("plans = %v", plans)
			}
			p := plans[0].(map[string]any)
			if p["service"] != "rag-chat" || p["replicas"].(float64) < 1 || !strings.Contains(p["explanation"].(string), "N = ") {
				t.Errorf("plan = %v", p)
			}
		}},
		{"plan without capacity facts fails in the document", []string{"plan", "--format", "json", "../../examples/code-panel.yaml"}, exitProblems, func(t *testing.T, doc map[string]any) {
			if doc["ok"] != false || len(doc["plans"].([]any)) != 0 || !strings.Contains(doc["error"].(string), "capacity facts") {
				t.Errorf("doc = %v", doc)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(tt.args, &stdout, &stderr); got != tt.exit {
				t.Fatalf("exit %d, want %d; stderr:\n%s", got, tt.exit, stderr.String())
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(stdout.Bytes()))
			if err != nil {
				t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout.String())
			}
			if err := schemas[tt.args[0]].Validate(inst); err != nil {
				t.Fatalf("against docs/schemas/%s.schema.json: %v\n%s", tt.args[0], err, stdout.String())
			}
			var doc map[string]any
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			tt.check(t, doc)
		})
	}
}

// The schemas are closed: a field the documentation does not name fails.
func TestJSONSchemasRejectUndocumentedFields(t *testing.T) {
	schemas := jsonSchemas(t)
	docs := map[string]string{
		"validate": `{"ok": true, "problems": [], "warnings": [], "files": 1, "slos": 1, "extra": 1}`,
		"compile":  `{"ok": true, "problems": [], "warnings": [], "output": "o", "slos": 1, "written": true, "files": [{"path": "a", "bytes": 1, "sha256": "x"}]}`,
		"plan":     `{"ok": true, "problems": [{"file": "a", "severity": "fatal", "message": "m"}], "warnings": [], "plans": []}`,
	}
	for cmd, doc := range docs {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if schemas[cmd].Validate(inst) == nil {
			t.Errorf("%s: the schema accepts %s", cmd, doc)
		}
	}
}
