package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

func TestANamedTierLabelsEveryRuleAndPrefixesTheGroup(t *testing.T) {
	tests := []struct {
		name, tier, group string
	}{
		{"a spec without a tier writes the rules as before", "", "inferslo-job"},
		{"an interactive tier labels and prefixes", model.SLOTierInteractive, "interactive-inferslo-job"},
		{"a batch tier labels and prefixes", model.SLOTierBatch, "batch-inferslo-job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tiers, err := model.WorkbookTiersOf(model.TierSeverities(tt.tier), 28*24*time.Hour, 2*time.Minute, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			slo := model.SLO{Name: "job", Service: model.Service{Name: "svc"}, Objective: model.NewDecimal(99, 100), SLOTier: tt.tier,
				SLI:    model.SLI{Counter: true, Total: &model.Query{Expr: "t"}, Bad: &model.Query{Expr: "b"}},
				Window: 28 * 24 * time.Hour, Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
				Alerting: model.Alerting{Tiers: tiers, NoData: true}}
			g, err := Group(slo, nil)
			if err != nil {
				t.Fatal(err)
			}
			if g.Name != tt.group {
				t.Errorf("group %q, want %q", g.Name, tt.group)
			}
			for _, r := range g.Rules {
				if got, ok := r.Labels[model.LabelSLOTier]; got != tt.tier || ok != (tt.tier != "") {
					t.Errorf("%s%s: %s=%q (set: %v), want %q", r.Record, r.Alert, model.LabelSLOTier, got, ok, tt.tier)
				}
				if r.Alert == model.AlertBurn && tt.tier == model.SLOTierBatch && r.Labels[model.LabelBurnTier] != "ticket" {
					t.Errorf("a batch SLO has a %s burn alert", r.Labels[model.LabelBurnTier])
				}
				if strings.Contains(r.Expr, model.LabelSLOTier) {
					t.Errorf("%s%s matches on the tier: %s", r.Record, r.Alert, r.Expr)
				}
			}
		})
	}
}
