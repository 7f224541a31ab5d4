package rules

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// TestNoWindowIsBuiltFromMoreThanMaxSumsTermsTiles covers SLOs whose alert
// policies leave few windows between the base and a long one: a window is
// then read from the base recordings, or the SLO window from hourly tiles,
// rather than from hundreds of offset tiles (a calendar month alerted only
// over an hour once wrote 720 of them, 82 kB per expression, which lint
// declined to read).
func TestNoWindowIsBuiltFromMoreThanMaxSumsTermsTiles(t *testing.T) {
	day := 24 * time.Hour
	page := model.Tier{Severity: "page", For: 2 * time.Minute, Windows: []model.WindowPair{{Long: time.Hour, Short: 5 * time.Minute, Factor: model.NewDecimal(144, 10)}}}
	slowTicket := model.Tier{Severity: "ticket", For: 2 * time.Minute, Windows: []model.WindowPair{{Long: 3 * day, Short: 5 * time.Minute, Factor: model.NewDecimal(1, 1)}}}
	tests := []struct {
		name   string
		window time.Duration
		cal    *model.Calendar
		tiers  []model.Tier
	}{
		{"a calendar month alerted only over an hour", 30 * day, &model.Calendar{Unit: "M", Count: 1}, []model.Tier{page}},
		{"a calendar quarter alerted only over an hour", 90 * day, &model.Calendar{Unit: "Q", Count: 1}, []model.Tier{page}},
		{"a rolling 28 days with a three-day ticket over five minutes", 28 * day, nil, []model.Tier{page, slowTicket}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Objective: model.NewDecimal(99, 100),
				SLI:    model.SLI{Counter: true, Total: &model.Query{Expr: "t"}, Bad: &model.Query{Expr: "b"}},
				Window: tt.window, Calendar: tt.cal, Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
				Alerting: model.Alerting{Tiers: tt.tiers, NoData: true}}
			groups, _, err := serviceGroups([]model.SLO{slo}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range groups {
				for _, r := range g.Rules {
					if n := strings.Count(r.Expr, " offset "); n >= maxSumsTerms {
						t.Errorf("%s{window=%q} reads %d offset tiles, want fewer than %d", r.Record, r.Labels[model.LabelWindow], n, maxSumsTerms)
					}
				}
			}
		})
	}

	t.Run("a window read from the base recordings is the count-weighted ratio of what exists", func(t *testing.T) {
		slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Objective: model.NewDecimal(99, 100),
			SLI:    model.SLI{Counter: true, Total: &model.Query{Expr: "sum(t)"}, Bad: &model.Query{Expr: "sum(b)"}},
			Window: 28 * day, Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
			Alerting: model.Alerting{Tiers: []model.Tier{page, slowTicket}, NoData: true}}
		// 1% errors for the first hour at 10/s, then 3% at 30/s: over what
		// exists of three days the ratio weighs the second hour three times.
		ll, _ := evaluate(t, slo, "t 0+600x60 36600+1800x60\nb 0+6x60 360+54x60", 2*time.Hour)
		v := instant(t, ll, model.Selector(model.ErrorRatio, slo, 3*day), time.Unix(0, 0).UTC().Add(2*time.Hour))
		want := (0.01*10 + 0.03*30) / 40
		if math.Abs(v-want) > 2e-3 {
			t.Errorf("3d error ratio = %v, want about %v", v, want)
		}
	})
}
