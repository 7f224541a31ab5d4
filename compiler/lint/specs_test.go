package lint

import (
	"path/filepath"
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
