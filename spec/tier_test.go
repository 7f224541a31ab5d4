package spec_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

// tierSLO is what a table case expects of one resolved SLO.
type tierSLO struct {
	name        string
	tier        string
	window      time.Duration
	severities  []string
	scaleOnBurn bool
}

func TestTheTierSetsDefaultsThatExplicitValuesOverride(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name    string
		spec    string // the spec section, indented by two spaces
		want    []tierSLO
		quarter bool // the window is the calendar quarter
	}{
		{
			name: "a spec without a tier keeps both alert tiers and names no tier",
			spec: `  engine: vllm
  window: 28d
  objectives:
    - {sli: ttft, threshold: 500ms, target: 99%}
    - {sli: errors, target: 99.9%}`,
			want: []tierSLO{
				{"job-errors", "", 28 * day, []string{"page", "ticket"}, false},
				{"job-ttft", "", 28 * day, []string{"page", "ticket"}, true},
			},
		},
		{
			name: "an interactive tier is named but changes no default",
			spec: `  tier: interactive
  engine: vllm
  window: 28d
  objectives:
    - {sli: ttft, threshold: 500ms, target: 99%}
    - {sli: errors, target: 99.9%}`,
			want: []tierSLO{
				{"job-errors", "interactive", 28 * day, []string{"page", "ticket"}, false},
				{"job-ttft", "interactive", 28 * day, []string{"page", "ticket"}, true},
			},
		},
		{
			name: "a batch tier reads e2e latency over 90d, raises tickets only and keeps out of KEDA",
			spec: `  tier: batch
  engine: vllm
  objectives:
    - {threshold: 60s, target: 99%}
    - {sli: errors, target: 99.5%}`,
			want: []tierSLO{
				{"job-e2e", "batch", 90 * day, []string{"ticket"}, false},
				{"job-errors", "batch", 90 * day, []string{"ticket"}, false},
			},
		},
		{
			name: "a batch tier keeps the spec's window, SLI and scaleOnBurn",
			spec: `  tier: batch
  engine: vllm
  window: 28d
  objectives:
    - {sli: ttft, threshold: 2.5s, target: 99%, scaleOnBurn: true}
    - {sli: errors, target: 99.5%}`,
			want: []tierSLO{
				{"job-errors", "batch", 28 * day, []string{"ticket"}, false},
				{"job-ttft", "batch", 28 * day, []string{"ticket"}, true},
			},
		},
		{
			name: "a batch tier on a calendar defaults to the calendar quarter",
			spec: `  tier: batch
  engine: vllm
  calendar: {timeZone: UTC}
  objectives:
    - {sli: errors, target: 99.5%}`,
			want: []tierSLO{
				{"job-errors", "batch", 90 * day, []string{"ticket"}, false},
			},
			quarter: true,
		},
		{
			name: "a batch tier with a ticket for of its own still has no page",
			spec: `  tier: batch
  engine: vllm
  window: 28d
  objectives:
    - {sli: errors, target: 99.5%}
  alerting:
    page: {enabled: false}
    ticket: {for: 1h}`,
			want: []tierSLO{
				{"job-errors", "batch", 28 * day, []string{"ticket"}, false},
			},
		},
		{
			name: "a batch tier with the ticket disabled has no burn alerts",
			spec: `  tier: batch
  engine: vllm
  window: 7d
  objectives:
    - {sli: errors, target: 99.5%}
  alerting:
    ticket: {enabled: false}`,
			want: []tierSLO{
				{"job-errors", "batch", 7 * day, nil, false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "apiVersion: inferslo/v1alpha1\nkind: InferenceSLO\nmetadata: {name: job}\nspec:\n" + tt.spec + "\n"
			res, err := spec.Parse(spec.Source{Name: "job.yaml", Data: []byte(doc)})
			if err != nil {
				t.Fatal(err)
			}
			if err := res.Err(); err != nil {
				t.Fatal(err)
			}
			var got []tierSLO
			for _, s := range res.Set.SLOs {
				if q := s.Calendar != nil && s.Calendar.Unit == "Q"; q != tt.quarter {
					t.Errorf("%s: calendar quarter = %v, want %v", s.Name, q, tt.quarter)
				}
				var sevs []string
				for _, tier := range s.Alerting.Tiers {
					sevs = append(sevs, tier.Severity)
				}
				got = append(got, tierSLO{s.Name, s.SLOTier, s.Window, sevs, s.ScaleOnBurn})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d SLOs %+v, want %+v", len(got), got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.name != w.name || g.tier != w.tier || g.window != w.window || !slices.Equal(g.severities, w.severities) || g.scaleOnBurn != w.scaleOnBurn {
					t.Errorf("SLO %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestABatchTierKeepsTheWorkbookTicketWindows: dropping the page tier must
// not change the ticket tier's windows, factors or `for`.
func TestABatchTierKeepsTheWorkbookTicketWindows(t *testing.T) {
	for _, window := range []string{"28d", "90d"} {
		t.Run(window, func(t *testing.T) {
			doc := "apiVersion: inferslo/v1alpha1\nkind: InferenceSLO\nmetadata: {name: job}\nspec:\n  tier: batch\n  engine: vllm\n  window: " + window +
				"\n  objectives:\n    - {sli: errors, target: 99.5%}\n"
			res, err := spec.Parse(spec.Source{Name: "job.yaml", Data: []byte(doc)})
			if err != nil {
				t.Fatal(err)
			}
			if err := res.Err(); err != nil {
				t.Fatal(err)
			}
			slo := res.Set.SLOs[0]
			all, err := model.WorkbookTiersOf(model.Severities, slo.Window, 4*slo.ScrapeInterval, slo.Evaluation)
			if err != nil {
				t.Fatal(err)
			}
			got := slo.Alerting.Tiers
			if len(got) != 1 || got[0].Severity != "ticket" {
				t.Fatalf("tiers = %+v, want the ticket tier only", got)
			}
			// Decimals hold pointers; compare the printed tiers.
			if fmt.Sprint(got[0]) != fmt.Sprint(all[1]) {
				t.Errorf("ticket tier = %+v, want the workbook's %+v", got[0], all[1])
			}
		})
	}
}

// TestAnInteractiveSpecWithoutAWindowStillNeedsOne: only the batch tier
// defaults the window.
func TestAnInteractiveSpecWithoutAWindowStillNeedsOne(t *testing.T) {
	for _, tier := range []string{"", "  tier: interactive\n"} {
		doc := "apiVersion: inferslo/v1alpha1\nkind: InferenceSLO\nmetadata: {name: job}\nspec:\n" + tier + "  engine: vllm\n  objectives:\n    - {sli: errors, target: 99.5%}\n"
		res, err := spec.Parse(spec.Source{Name: "job.yaml", Data: []byte(doc)})
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); err == nil || !strings.Contains(err.Error(), "spec.window: required") {
			t.Errorf("tier %q: err = %v, want spec.window required", tier, err)
		}
	}
}
