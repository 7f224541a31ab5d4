package lint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/scrape"
	"github.com/inferslo/inferslo/spec"
)

// Each engine's spec in testdata/engines reads only series its engine's
// scrape (written from the engine's documented exposition) has: the rules,
// the dashboards' panels and the KEDA triggers.
func TestEachEngineSpecMatchesItsEnginesScrape(t *testing.T) {
	for _, id := range []string{"dynamo", "litellm", "llama-cpp", "otel", "sglang", "tgi", "triton", "trtllm-serve", "vllm"} {
		t.Run(id, func(t *testing.T) {
			cat, err := spec.Catalog()
			if err != nil {
				t.Fatal(err)
			}
			s, err := scrape.Load(t.Context(), filepath.Join("../../testdata/scrapes", id+".prom"), scrape.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			c := &SpecChecker{Scrapes: []*Scrape{s}, Catalog: cat}
			res, err := spec.LoadVerified(cat, []spec.Checker{func(slo model.SLO) []spec.Problem {
				checked++
				return c.Check(slo)
			}}, filepath.Join("../../testdata/engines", id+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Problems {
				if strings.Contains(p.Message, "scrape") {
					t.Error(p.String())
				}
			}
			if checked == 0 {
				t.Fatal("no SLO was checked")
			}
		})
	}
}

// An optional counter the rules read as 0 while it is absent (vLLM's
// admission rejections, a term of the errors SLI's sums) is a warning when
// the scrape lacks it; with every term missing it is an error again.
func TestAnAbsentOptionalCounterIsAWarning(t *testing.T) {
	data, err := os.ReadFile("../../testdata/scrapes/vllm.prom")
	if err != nil {
		t.Fatal(err)
	}
	drop := func(names ...string) string {
		var kept []string
		for _, l := range strings.Split(string(data), "\n") {
			if !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(l, n) }) {
				kept = append(kept, l)
			}
		}
		path := filepath.Join(t.TempDir(), "vllm.prom")
		if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name     string
		scrape   string
		errors   int
		warnings int
	}{
		{"without the admission counter the spec holds, warned", drop("vllm:admission_rejections_total"), 0, 1},
		{"without any request counter the errors SLI is broken", drop("vllm:admission_rejections_total", "vllm:request_success_total"), 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, err := spec.Catalog()
			if err != nil {
				t.Fatal(err)
			}
			s, err := scrape.Load(t.Context(), tt.scrape, scrape.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			c := &SpecChecker{Scrapes: []*Scrape{s}, Catalog: cat}
			res, err := spec.LoadVerified(cat, []spec.Checker{c.Check}, "../../examples/chat.yaml")
			if err != nil {
				t.Fatal(err)
			}
			errs, warns := 0, 0
			for _, p := range res.Problems {
				if !strings.Contains(p.Message, "scrape") {
					continue
				}
				if p.Severity == spec.Error {
					errs++
				} else if p.Severity == spec.Warning {
					warns++
				}
			}
			if errs != tt.errors || warns != tt.warnings {
				t.Errorf("%d errors and %d warnings, want %d and %d:\n%v", errs, warns, tt.errors, tt.warnings, res.Problems)
			}
		})
	}
}
