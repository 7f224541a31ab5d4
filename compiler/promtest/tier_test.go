package promtest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// TestABatchSLOsTwentyTimesBurnRaisesOnlyATicket: the generated test of a
// batch SLO expects the ticket alone during the burn that pages an
// interactive SLO; it passes on the batch rules and fails on rules that
// also page.
func TestABatchSLOsTwentyTimesBurnRaisesOnlyATicket(t *testing.T) {
	t.Parallel()
	batch := ttftSLO(t)
	batch.SLOTier = model.SLOTierBatch
	paging := batch
	batch.Alerting.Tiers = batch.Alerting.Tiers[1:]
	if batch.Alerting.Tiers[0].Severity != "ticket" {
		t.Fatalf("tiers %+v: want the ticket tier left", batch.Alerting.Tiers)
	}
	const name = "chat-ttft: a 20x burn raises the ticket and nothing pages (no page tier)"
	tests := []struct {
		name      string
		ruleSLO   model.SLO
		wantFails bool
	}{
		{"the batch rules pass", batch, false},
		{"rules that also page fail it", paging, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ruleFiles, err := rules.Build(model.Set{SLOs: []model.SLO{tt.ruleSLO}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The tests are the batch SLO's; the rules are the case's.
			dir, testFiles := writeOut(t, model.Set{SLOs: []model.SLO{batch}}, func([]byte) []byte { return ruleFiles[0].Data })
			if !strings.Contains(string(testFiles[0].Data), name) {
				t.Fatalf("no test %q in:\n%s", name, testFiles[0].Data)
			}
			path := filepath.Join(dir, filepath.FromSlash(testFiles[0].Path))
			fails := strings.Join(runTests(t, filepath.Dir(path), path, name), "\n")
			if got := strings.Contains(fails, name); got != tt.wantFails {
				t.Errorf("the 20x test failed: %v, want %v; failures:\n%s", got, tt.wantFails, fails)
			}
			if !tt.wantFails {
				promtool(t, path)
			}
		})
	}
}
