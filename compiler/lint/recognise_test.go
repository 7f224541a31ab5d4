package lint

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestFilesLintDoesNotRecogniseAreSkippedAndNeverQuoted(t *testing.T) {
	tests := []struct {
		name, data, reason string
	}{
		{"a Helm template", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}\nstringData:\n  token: hunter2\n{{- end }}\n", "Helm template"},
		{"JSON with comments", "{\n  // hunter2\n  \"panels\": []\n}\n", "JSON with comments"},
		{"a values file", "password: hunter2\nreplicas: 2\n", "no rule groups"},
		{"a Helm-templated rule file", "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up{job=\"{{ .Values.job }}\"} == 0\n    annotations: {{ toYaml .Values.hunter2 }}\n", "Helm template"},
		{"a Go template without Helm's values", "kind: PrometheusRule\nspec:\n  groups: {{ range .Groups }}\n   - {{ . }}: hunter2\n{{ end }}\n", "a template"},
		{"a Jinja template", "{%- set job = 'vllm' %}\ngroups:\n- name: g\n  rules:\n  - record: r\n    expr: up{job=\"{{ job }}\", token=\"hunter2\"}\n", "a template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run([]Source{{Name: "f.yaml", Data: []byte(tt.data)}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Files != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, tt.reason) {
				t.Fatalf("files %d, skipped %+v; want one skip saying %q", res.Files, res.Skipped, tt.reason)
			}
			for _, format := range Formats {
				var b bytes.Buffer
				if err := Write(&b, format, res); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(b.String(), "hunter2") {
					t.Fatalf("%s output quotes the skipped file: %s", format, b.String())
				}
			}
		})
	}
}

func TestOtherGeneratorsSpecsAreRecognisedWithAnInfoLine(t *testing.T) {
	for name, data := range map[string]string{
		"Sloth":               "version: prometheus/v1\nservice: s\nslos:\n- name: a\n",
		"Sloth on Kubernetes": "apiVersion: sloth.slok.dev/v1\nkind: PrometheusServiceLevel\nspec: {service: s}\n",
		"Pyrra":               "apiVersion: pyrra.dev/v1alpha1\nkind: ServiceLevelObjective\nmetadata: {name: a}\n",
		"OpenSLO v1alpha":     "apiVersion: openslo/v1alpha\nkind: SLO\nmetadata: {name: a}\n---\napiVersion: openslo/v1alpha\nkind: SLO\nmetadata: {name: b}\n",
	} {
		res, err := Run([]Source{{Name: "slo.yaml", Data: []byte(data)}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != 1 || res.Findings[0].Severity != Info || res.Findings[0].Check != "spec/other-generator" {
			t.Errorf("%s: findings %+v, want one info line", name, res.Findings)
		}
	}
}

func TestABrokenRuleFileIsStillAnError(t *testing.T) {
	res, err := Run([]Source{{Name: "r.yaml", Data: []byte("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n   for: 5m\n")}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(Error) != 1 || res.Findings[0].Check != "promql/syntax" {
		t.Fatalf("findings %+v, want one YAML syntax error", res.Findings)
	}
}

func TestOutputShowsAWindowAroundTheColumn(t *testing.T) {
	// One minified dashboard line of 300 KB with a finding in the middle.
	pad := strings.Repeat(`{"type":"text","title":"x"},`, 10000)
	dash := `{"panels":[` + pad + `{"targets":[{"expr":"sum(rate(vllm:time_to_first_token_seconds_bucket{le=\"0.3\"}[5m]))"}]},` + pad + `{"type":"text"}]}`
	res, err := Run([]Source{{Name: "d.json", Data: []byte(dash)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, "text", res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if len(out) > 1000 || !strings.Contains(out, `le=\"0.3\"`) {
		t.Fatalf("output of %d bytes, want the window around le=\"0.3\" under 1000:\n%.2000s", len(out), out)
	}
	lines := strings.Split(out, "\n")
	src, caret := lines[1], lines[2]
	at := strings.Index(caret, "^")
	if at < 0 || !strings.HasPrefix(src[at:], `le=\"0.3\"`) {
		t.Fatalf("caret at %d does not point to the matcher:\n%s\n%s", at, src, caret)
	}
}

func TestConfigFile(t *testing.T) {
	cfg, err := ParseConfig(".inferslo.yaml", []byte(`lint:
  prometheus: 2
  disable: [alert/missing-severity]
  severity: {engine/unknown-metric: error}
  include: ["rules/**"]
  exclude: ["**/templates/**", "rules/vendor/*.yaml"]
`))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"rules/a.yaml": true, "rules/x/y/b.yaml": true, "rules/vendor/c.yaml": false,
		"rules/vendor/deep/c.yaml": true, "rules/chart/templates/d.yaml": false, "dashboards/e.json": false,
	} {
		if got := cfg.Lints(path); got != want {
			t.Errorf("Lints(%s) = %v, want %v", path, got, want)
		}
	}
	src := []Source{{Name: "r.yaml", Data: []byte(`groups:
- name: g
  rules:
  - record: x
    expr: sum(rate(vllm:e2e_request_latency_seconds_bucket{le="1"}[5m])) + vllm:num_request_waiting
  - alert: A
    expr: up == 0
`)}}
	checks := func(c *Config) string {
		res, err := Run(src, Options{Config: c})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range res.Findings {
			out = append(out, fmt.Sprintf("%s=%s", f.Check, f.Severity))
		}
		return strings.Join(out, " ")
	}
	if got, want := checks(nil), "promql/le-format=error engine/unknown-metric=warning alert/missing-severity=warning"; got != want {
		t.Errorf("defaults: %s, want %s", got, want)
	}
	if got, want := checks(cfg), "engine/unknown-metric=error"; got != want {
		t.Errorf("configured: %s, want %s", got, want)
	}
	for _, bad := range []string{"lint: {prometheus: 4}", "lint: {disable: [no/such]}", "lint: {severity: {alert/template: fatal}}", "lint: {colour: red}"} {
		if _, err := ParseConfig("c.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "c.yaml") {
			t.Errorf("%s: error %v, want one naming the file", bad, err)
		}
	}
}

func TestAQueryNestedTooDeepIsWarnedAboutAndNotParsed(t *testing.T) {
	tests := []struct {
		name, expr string
		want       bool
	}{
		{"a query 100,000 parentheses deep", strings.Repeat("(", 100000) + "up" + strings.Repeat(")", 100000), true},
		{"a query longer than 16 KB", "up" + strings.Repeat(" + up", 4000), true},
		{"a query 64 deep", strings.Repeat("(", 63) + "up" + strings.Repeat(")", 63), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := "groups:\n- name: g\n  rules:\n  - record: a:b:c\n    expr: " + tt.expr + "\n"
			res, err := Run([]Source{{Name: "r.rules.yaml", Data: []byte(rules)}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, fd := range res.Findings {
				if fd.Check == "promql/syntax" {
					t.Fatalf("a bounded query was parsed: %v", fd)
				}
				got = got || fd.Check == checkTooLarge.ID
			}
			if got != tt.want {
				t.Fatalf("too-large finding %v, want %v: %v", got, tt.want, res.Findings)
			}
		})
	}
}

func TestHistogramsNoSLIReadsAreKnownMetrics(t *testing.T) {
	data, err := os.ReadFile("testdata/engine-distributions.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run([]Source{{Name: "engine-distributions.json", Data: data}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) > 0 {
		t.Fatalf("an engine's own token and phase histograms got findings: %v", res.Findings)
	}
}
