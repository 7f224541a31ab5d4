package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// docBlock is one fenced yaml block of the README or docs/.
type docBlock struct {
	file string
	line int // of the opening fence
	text string
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// docFiles are the Markdown files a user reads: the README and docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	return append([]string{"../../README.md"}, docs...)
}

// yamlBlocks returns the ```yaml blocks of a Markdown file.
func yamlBlocks(t *testing.T, file string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []docBlock
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```yaml" {
			continue
		}
		start := i
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		out = append(out, docBlock{strings.TrimPrefix(file, "../../"), start + 1, strings.Join(lines[start+1:i], "\n") + "\n"})
	}
	return out
}

// docInvalidMarker marks a spec block the docs show failing on purpose.
const docInvalidMarker = "# inferslo-docs: invalid"

var specAPIVersion = regexp.MustCompile(`(?m)^apiVersion:\s*(openslo|inferslo)/`)

// shorthandKeys are the keys of the shorthand's spec a fragment may show.
var shorthandKeys = map[string]bool{
	"service": true, "tier": true, "engine": true, "engineVersion": true, "buckets": true,
	"selector": true, "groupBy": true, "window": true, "calendar": true, "scrapeInterval": true,
	"evaluationInterval": true, "ttftDenominator": true, "histogramType": true, "nativeSchema": true,
	"objectives": true, "alerting": true, "autoscaling": true, "metrics": true, "description": true,
}

// specOfBlock returns the spec a block is or shows a part of, completed
// over a small shorthand spec when it is a fragment of the shorthand, or
// "" when the block is no spec (a rule, a route, a config, a fragment of
// OpenSLO).
func specOfBlock(t *testing.T, b docBlock) string {
	t.Helper()
	if specAPIVersion.MatchString(b.text) {
		return b.text
	}
	var frag map[string]any
	if err := yaml.Unmarshal([]byte(b.text), &frag); err != nil || len(frag) == 0 {
		return ""
	}
	if s, ok := frag["spec"].(map[string]any); ok && len(frag) == 1 {
		frag = s
	}
	for k := range frag {
		if !shorthandKeys[k] {
			return ""
		}
	}
	if objectives, ok := frag["objectives"].([]any); ok {
		for _, o := range objectives {
			if m, ok := o.(map[string]any); ok && (m["op"] != nil || m["value"] != nil || m["ratioMetrics"] != nil) {
				return "" // OpenSLO's objectives
			}
		}
	}
	engine, objective := "vllm", map[string]any{"sli": "ttft", "threshold": "500ms", "target": "99%"}
	if m, ok := frag["metrics"].(map[string]any); ok {
		// spec.metrics describe an engine of their own, whose SLIs the
		// completing objective takes.
		engine = "app"
		if f, ok := m["failures"].(map[string]any); ok && m["histograms"] == nil {
			for kind := range f {
				objective = map[string]any{"sli": kind, "target": "99%"}
			}
		}
	}
	spec := map[string]any{"engine": engine, "window": "28d", "objectives": []any{objective}}
	for k, v := range frag {
		spec[k] = v
	}
	out, err := yaml.Marshal(map[string]any{
		"apiVersion": "inferslo/v1alpha1", "kind": "InferenceSLO",
		"metadata": map[string]any{"name": "docs"}, "spec": spec,
	})
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return string(out)
}

// TestEverySpecInTheDocsValidates validates each yaml block of the README
// and docs/ that is a spec, or a part of a shorthand spec completed over a
// small one: it validates unless the block says it fails on purpose.
func TestEverySpecInTheDocsValidates(t *testing.T) {
	specs := 0
	for _, f := range docFiles(t) {
		for _, b := range yamlBlocks(t, f) {
			text := specOfBlock(t, b)
			if text == "" {
				continue
			}
			specs++
			t.Run(b.String(), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "spec.yaml")
				if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
				var stdout, stderr bytes.Buffer
				code := run([]string{"validate", path}, &stdout, &stderr)
				invalid := strings.Contains(b.text, docInvalidMarker)
				switch {
				case invalid && code == exitOK:
					t.Errorf("the block says it fails (%s), yet it validates", docInvalidMarker)
				case !invalid && code != exitOK:
					t.Errorf("does not validate (exit %d):\n%s\n%s", code, stderr.String(), text)
				}
			})
		}
	}
	if specs < 10 {
		t.Errorf("found %d spec blocks in the docs; the extraction is broken", specs)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestTheDocsQuoteTheOutputsValues compiles a spec that leaves the
// autoscaling defaults alone and checks the values docs/kubernetes.md and
// docs/specs.md quote from its ScaledObject, and that the install lines name
// no release the changelog has not released.
func TestTheDocsQuoteTheOutputsValues(t *testing.T) {
	dir := t.TempDir()
	specPath := filepath.Join(dir, "chat.yaml")
	if err := os.WriteFile(specPath, []byte(`
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  selector: {model_name: m}
  window: 28d
  objectives: [{sli: ttft, threshold: 500ms, target: 99%}, {sli: errors, target: 99.9%}]
  autoscaling:
    target: {name: vllm-chat}
    maxReplicas: 8
    prometheus: http://prometheus:9090
    queuePerReplica: "2"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"compile", specPath, "-o", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("compile exits %d:\n%s", code, stderr.String())
	}
	keda, err := os.ReadFile(filepath.Join(out, "keda", "chat.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var so struct {
		Spec struct {
			Advanced struct {
				HPA struct {
					Behavior struct {
						ScaleUp struct {
							StabilizationWindowSeconds int `yaml:"stabilizationWindowSeconds"`
						} `yaml:"scaleUp"`
						ScaleDown struct {
							StabilizationWindowSeconds int `yaml:"stabilizationWindowSeconds"`
						} `yaml:"scaleDown"`
					}
				} `yaml:"horizontalPodAutoscalerConfig"`
			}
		}
	}
	if err := yaml.Unmarshal(keda, &so); err != nil {
		t.Fatal(err)
	}
	b := so.Spec.Advanced.HPA.Behavior
	up, down := b.ScaleUp.StabilizationWindowSeconds, b.ScaleDown.StabilizationWindowSeconds
	if up == 0 || down == 0 {
		t.Fatalf("no stabilisation windows in the ScaledObject:\n%s", keda)
	}
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(data)), " ")
	}
	kube, specs, readme, changelog := read("../../docs/kubernetes.md"), read("../../docs/specs.md"), read("../../README.md"), read("../../CHANGELOG.md")
	if want := fmt.Sprintf("scale-up stabilisation %ds, scale-down %ds", up, down); !strings.Contains(kube, want) {
		t.Errorf("docs/kubernetes.md does not say %q", want)
	}
	if want := fmt.Sprintf("scaleDownStabilization: %ds # the HPA's own default", down); !strings.Contains(specs, want) {
		t.Errorf("the reference spec of docs/specs.md does not say %q", want)
	}
	for _, m := range regexp.MustCompile(`cmd/inferslo@v(\d+\.\d+\.\d+)`).FindAllStringSubmatch(readme+" "+read("../../docs/cli.md"), -1) {
		if !strings.Contains(changelog, "## ["+m[1]+"]") {
			t.Errorf("the README installs v%s, which CHANGELOG.md has not released", m[1])
		}
	}
}
