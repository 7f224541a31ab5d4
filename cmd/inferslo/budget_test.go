package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBudget answers every instant query with one budget series of the
// SLO asked for, left at remaining; empty answers no series.
func fakeBudget(t *testing.T, remaining string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		result := "[]"
		if remaining != "" {
			result = fmt.Sprintf(`[{"metric":{"__name__":"inferslo:error_budget_remaining:ratio","slo":"fleet-errors","window":"4w","model_name":"model-a"},"value":[1700000000,%q]}]`, remaining)
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":%s}}`, result)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The gate's exit codes: the real server's budgets are read in
// compiler/budget; here the command's decision on what it is answered.
func TestBudgetExitCodes(t *testing.T) {
	dir := t.TempDir()
	specFile := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(specFile, []byte(`apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fleet}
spec:
  engine: vllm
  selector: {namespace: llm}
  groupBy: [model_name]
  window: 28d
  objectives:
    - {sli: errors, target: 99%}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		remaining string
		args      []string
		want      int
		stdout    string
		stderr    string
	}{
		{"a budget above the gate passes", "0.95", []string{"--fail-below", "20"}, exitOK, `fleet-errors  fleet    {model_name="model-a"}  4w      95.0%        pass`, ""},
		{"a budget below the gate fails it", "-3.5", []string{"--fail-below", "20"}, exitProblems, "-350.0%      below", "1 of 1 SLO groups have less than 20.0% of their error budget left"},
		{"without a gate any budget passes", "-3.5", nil, exitOK, "-350.0%", ""},
		{"json carries the group, the share and the gate", "0.1", []string{"--fail-below", "20", "--json"}, exitProblems, `"remaining": 0.1,`, ""},
		{"an absent budget cannot pass the gate", "", []string{"--fail-below", "20"}, exitUnknown, "", `slo fleet-errors: the server holds no inferslo:error_budget_remaining:ratio{slo="fleet-errors"}`},
		{"a gate outside 0 to 100 is refused", "0.95", []string{"--fail-below", "120"}, exitUnknown, "", "--fail-below 120: valid is a percentage from 0 to 100"},
		{"a time that is not one is refused", "0.95", []string{"--at", "yesterday"}, exitUnknown, "", `--at: "yesterday" is not a time`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"budget", specFile, "--prometheus", fakeBudget(t, tt.remaining)}, tt.args...)
			if got := run(args, &out, &errOut); got != tt.want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", got, tt.want, errOut.String())
			}
			if !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, out.String())
			}
			if !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, errOut.String())
			}
		})
	}
}
