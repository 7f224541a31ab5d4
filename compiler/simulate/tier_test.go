package simulate

import (
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

// TestABatchSLOUnderAFastBurnRaisesATicketAndNoPage replays the burn that
// pages an interactive SLO against a batch SLO's rules: the ticket fires
// within the predicted delay and no page fires. Rules with a page tier
// (a hand-edited file) fail the same check.
func TestABatchSLOUnderAFastBurnRaisesATicketAndNoPage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulates hours of traffic")
	}
	// A 7d window keeps the replay to about an hour of traffic.
	doc := `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: nightly}
spec:
  tier: batch
  engine: vllm
  window: 7d
  objectives:
    - {sli: errors, target: 99.5%}
`
	res, err := spec.Parse(spec.Source{Name: "nightly.yaml", Data: []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	slo := res.Set.SLOs[0]
	tests := []struct {
		name     string
		tiers    []model.Tier
		pageFree bool
	}{
		{"the batch tier's rules raise the ticket and nothing pages", slo.Alerting.Tiers, true},
		{"rules that also page fail the check", slotest.Workbook(t, slo.Window, slo.ScrapeInterval, slo.Evaluation), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			written := slo
			written.Alerting.Tiers = tt.tiers
			s := simOf(t, slo, written)
			checks, err := s.fastBurn()
			s.close()
			if err != nil {
				t.Fatal(err)
			}
			var ticket, page *Check
			for i, c := range checks {
				switch {
				case c.Subject == `ErrorBudgetBurn{severity="ticket"}`:
					ticket = &checks[i]
				case c.Subject == `ErrorBudgetBurn{severity="page"}`:
					page = &checks[i]
				}
			}
			if ticket == nil || page == nil {
				t.Fatalf("checks %+v lack the ticket or the page", checks)
			}
			t.Logf("ticket: %s, %s; page: %s", ticket.Expected, ticket.Observed, page.Observed)
			if !ticket.Pass || !strings.HasPrefix(ticket.Observed, "fired after") || ticket.Delay <= 0 || ticket.Delay > time.Hour {
				t.Errorf("ticket check %+v, want it fired within an hour", *ticket)
			}
			if page.Pass != tt.pageFree {
				t.Errorf("page check passed = %v (%s), want %v", page.Pass, page.Observed, tt.pageFree)
			}
		})
	}
}
