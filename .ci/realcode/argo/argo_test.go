package argo

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/metricproviders/prometheus"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	analysisutil "github.com/argoproj/argo-rollouts/utils/analysis"
	log "github.com/sirupsen/logrus"
	"sigs.k8s.io/yaml"
)

// spec is a service of two SLOs, one grouped by model.
const spec = `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  selector: {namespace: llm}
  groupBy: [model_name]
  window: 28d
  objectives: [{sli: errors, target: 99.9%}, {sli: ttft, threshold: 250ms, target: 99%}]
`

// inferslo runs the CLI: $INFERSLO_BIN when set (CI builds it once), else
// `go run` from the repository root.
func inferslo(t *testing.T, args ...string) {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if bin := os.Getenv("INFERSLO_BIN"); bin != "" {
		cmd = exec.Command(bin, args...)
	} else {
		cmd = exec.Command("go", append([]string{"run", "./cmd/inferslo"}, args...)...)
	}
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("inferslo %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// budgetServer answers every instant query with the budget left per
// group: none (absent), or one sample per value.
func budgetServer(t *testing.T, left ...string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		var samples []string
		for i, v := range left {
			samples = append(samples, fmt.Sprintf(`{"metric":{"__name__":"inferslo:error_budget_remaining:ratio","model_name":"m%d"},"value":[1767225600,%q]}`, i, v))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[%s]}}`, strings.Join(samples, ","))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestArgoRolloutsGatesACanaryOnTheCompiledTemplates decodes the compiled
// AnalysisTemplate strictly into Argo Rollouts' own type, resolves each
// metric's arguments as the analysis controller does (the address given
// by the Rollout, the gate its default or the Rollout's), and measures it
// with Argo's Prometheus provider: a healthy canary passes, a burning or
// unread one fails.
func TestArgoRolloutsGatesACanaryOnTheCompiledTemplates(t *testing.T) {
	dir := t.TempDir()
	specFile := filepath.Join(dir, "chat.yaml")
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	inferslo(t, "compile", specFile, "-o", out, "--analysis-templates", "--analysis-fail-below", "25")
	data, err := os.ReadFile(filepath.Join(out, "argo", "chat.analysistemplate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl v1alpha1.AnalysisTemplate
	if err := yaml.UnmarshalStrict(data, &tpl); err != nil {
		t.Fatalf("the template does not decode strictly into Argo's AnalysisTemplate: %v\n%s", err, data)
	}
	if len(tpl.Spec.Metrics) != 2 {
		t.Fatalf("%d metrics, want one per SLO", len(tpl.Spec.Metrics))
	}
	tests := []struct {
		name string
		left []string
		gate string // "": the template's default
		want v1alpha1.AnalysisPhase
	}{
		{"a healthy canary with 80% left passes the 25% gate", []string{"0.8", "0.6"}, "", v1alpha1.AnalysisPhaseSuccessful},
		{"one burning group fails the canary", []string{"0.8", "-3.5"}, "", v1alpha1.AnalysisPhaseFailed},
		{"a group just under the gate fails it", []string{"0.8", "0.249"}, "", v1alpha1.AnalysisPhaseFailed},
		{"a rollout's own gate replaces the default", []string{"0.8", "0.6"}, "0.7", v1alpha1.AnalysisPhaseFailed},
		{"no budget series fails rather than passes", nil, "", v1alpha1.AnalysisPhaseFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := budgetServer(t, tt.left...)
			args := []v1alpha1.Argument{{Name: "prometheus-address", Value: &addr}}
			if tt.gate != "" {
				args = append(args, v1alpha1.Argument{Name: "fail-below", Value: &tt.gate})
			}
			merged, err := analysisutil.MergeArgs(args, tpl.Spec.Args)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tpl.Spec.Metrics {
				metric, err := analysisutil.ResolveMetricArgs(m, merged)
				if err != nil {
					t.Fatal(err)
				}
				api, err := prometheus.NewPrometheusAPI(*metric)
				if err != nil {
					t.Fatal(err)
				}
				p, err := prometheus.NewPrometheusProvider(api, *log.NewEntry(log.New()), *metric)
				if err != nil {
					t.Fatal(err)
				}
				got := p.Run(&v1alpha1.AnalysisRun{}, *metric)
				if got.Phase != tt.want {
					t.Errorf("%s: phase %s (value %q, message %q), want %s", m.Name, got.Phase, got.Value, got.Message, tt.want)
				}
			}
		})
	}
}
