package simulate

import (
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/spec"
)

// TestABurstOfAdmissionRejectionsPages replays a burst of requests vLLM
// refuses at admission (HTTP 503, counted by vllm:admission_rejections_total
// and never by vllm:request_success_total): the errors SLI of a vLLM release
// with the counter pages, and the errors SLI of a release without it, fed
// the same series, stays silent, since the engine shows it no failure.
func TestABurstOfAdmissionRejectionsPages(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulates hours of traffic")
	}
	load := func(version string) model.SLO {
		t.Helper()
		doc := "apiVersion: inferslo/v1alpha1\nkind: InferenceSLO\nmetadata: {name: chat}\nspec:\n  engine: vllm\n" +
			"  engineVersion: \"" + version + "\"\n  selector: {model_name: llama-3-70b-instruct}\n  window: 7d\n  objectives:\n    - {sli: errors, target: 99.5%}\n"
		res, err := spec.Parse(spec.Source{Name: "chat.yaml", Data: []byte(doc)})
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		return res.Set.SLOs[0]
	}
	counting, blind := load("0.32.0"), load("0.31.0")
	if !strings.Contains(counting.SLI.Bad.Expr, "vllm:admission_rejections_total") || strings.Contains(blind.SLI.Bad.Expr, "admission") {
		t.Fatalf("bad queries: 0.32 %s; 0.31 %s", counting.SLI.Bad.Expr, blind.SLI.Bad.Expr)
	}
	// The synthetic failures are rejections only.
	counters, err := synth.Counters(counting)
	if err != nil {
		t.Fatal(err)
	}
	rejections := 0
	for _, c := range counters {
		name := c.Labels.Get("__name__")
		if name == "vllm:admission_rejections_total" && c.PerBad == 1 {
			rejections++
		}
		if name == "vllm:request_success_total" && c.Labels.Get("finished_reason") == "error" && c.PerBad != 0 {
			t.Fatalf("the burst also fails finished requests: %v", c)
		}
	}
	if rejections != 1 {
		t.Fatalf("no synthetic rejection counter among %v", counters)
	}
	tests := []struct {
		name    string
		written model.SLO
		pages   bool
	}{
		{"the errors SLI of a release that counts rejections pages", counting, true},
		{"the errors SLI without the rejection counter stays silent", blind, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := simOf(t, counting, tt.written)
			checks, err := s.fastBurn()
			s.close()
			if err != nil {
				t.Fatal(err)
			}
			var page *Check
			for i, c := range checks {
				if c.Subject == `ErrorBudgetBurn{severity="page"}` && strings.HasPrefix(c.Expected, "fires") {
					page = &checks[i]
				}
			}
			if page == nil {
				t.Fatalf("checks %+v lack the page's firing", checks)
			}
			t.Logf("page: %s, %s", page.Expected, page.Observed)
			if fired := strings.HasPrefix(page.Observed, "fired after"); fired != tt.pages {
				t.Errorf("page observed %q, want fired = %v", page.Observed, tt.pages)
			}
		})
	}
}
