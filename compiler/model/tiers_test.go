package model

import (
	"strings"
	"testing"
	"time"
)

const day = 24 * time.Hour

func TestWorkbookTiersScaleWithTheWindow(t *testing.T) {
	type pair struct{ long, short, factor string }
	tests := []struct {
		name               string
		window             time.Duration
		page               []pair
		ticket             []pair
		pageFor, ticketFor string
	}{
		{"a 30d window is the workbook's own table", 30 * day,
			[]pair{{"1h", "5m", "14.4"}, {"6h", "30m", "6"}},
			[]pair{{"1d", "2h", "3"}, {"3d", "6h", "1"}}, "2m", "48m"},
		{"a 28d window scales every window by 28/30", 28 * day,
			[]pair{{"56m", "4m40s", "14.4"}, {"5h36m", "28m", "6"}},
			[]pair{{"22h24m", "1h52m", "3"}, {"2d19h12m", "5h36m", "1"}}, "1m52s", "44m48s"},
		{"a 90d window triples them", 90 * day,
			[]pair{{"3h", "15m", "14.4"}, {"18h", "1h30m", "6"}},
			[]pair{{"3d", "6h", "3"}, {"9d", "18h", "1"}}, "6m", "2h24m"},
		{"a 7d window raises short windows to four scrapes", 7 * day,
			[]pair{{"14m", "2m", "14.4"}, {"1h24m", "7m", "6"}},
			[]pair{{"5h36m", "28m", "3"}, {"16h48m", "1h24m", "1"}}, "1m", "11m12s"},
		{"a 1d window keeps the page tier's long window at the rate minimum", day,
			[]pair{{"2m", "2m", "14.4"}, {"12m", "2m", "6"}},
			[]pair{{"48m", "4m", "3"}, {"2h24m", "12m", "1"}}, "1m", "1m36s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tiers, err := WorkbookTiersOf(Severities, tt.window, 2*time.Minute, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if len(tiers) != 2 || tiers[0].Severity != "page" || tiers[1].Severity != "ticket" {
				t.Fatalf("tiers = %+v, want page then ticket", tiers)
			}
			for i, want := range [][]pair{tt.page, tt.ticket} {
				got := tiers[i].Windows
				if len(got) != len(want) {
					t.Fatalf("%s: %d pairs, want %d", tiers[i].Severity, len(got), len(want))
				}
				for j, w := range want {
					g := pair{FormatDuration(got[j].Long), FormatDuration(got[j].Short), got[j].Factor.String()}
					if g != w {
						t.Errorf("%s pair %d = %v, want %v", tiers[i].Severity, j, g, w)
					}
				}
			}
			if got := FormatDuration(tiers[0].For); got != tt.pageFor {
				t.Errorf("page for = %s, want %s", got, tt.pageFor)
			}
			if got := FormatDuration(tiers[1].For); got != tt.ticketFor {
				t.Errorf("ticket for = %s, want %s", got, tt.ticketFor)
			}
		})
	}
}

func TestEveryTierSpendsTheWorkbookBudgetShareAtAnyWindow(t *testing.T) {
	want := []string{"2%", "5%", "10%", "10%"}
	for _, w := range []time.Duration{day, 7 * day, 28 * day, 30 * day, 90 * day} {
		tiers, err := WorkbookTiersOf(Severities, w, time.Second, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tier := range tiers {
			for _, p := range tier.Windows {
				got = append(got, p.BudgetFraction(w).Percent())
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("window %s: budget shares %v, want %v", FormatDuration(w), got, want)
		}
	}
}

func TestALongWindowBelowTheRateMinimumIsAnError(t *testing.T) {
	_, err := WorkbookTiersOf(Severities, day, 4*time.Minute, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "page tier's 1h window (2m scaled to a 1d SLO)") {
		t.Fatalf("err = %v, want the page tier's window named", err)
	}
}

func TestUnreachableTargetsNameTheTargetsThatWork(t *testing.T) {
	tests := []struct {
		name, factor, target, want string
	}{
		{"a 14.4x page cannot fire at 90%", "14.4", "0.9", "targets above 93.05% make it reachable"},
		{"a 6x page cannot fire at 80%", "6", "0.8", "targets above 83.33% make it reachable"},
		{"a 14.4x page fires at 99%", "14.4", "0.99", ""},
		{"a 1x ticket fires at 50%", "1", "0.5", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := ParseDecimal(tt.factor)
			target, _ := ParseDecimal(tt.target)
			err := UnreachableTarget(WindowPair{Long: time.Hour, Factor: f}, target)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestTheBaseWindowIsTheShortestAlertWindowUpToFiveMinutes(t *testing.T) {
	tests := []struct {
		name   string
		window time.Duration
		tiers  []string
		scrape time.Duration
		want   string
	}{
		{"28d uses the page tier's 4m40s", 28 * day, Severities, 30 * time.Second, "4m40s"},
		{"90d stays at 5m although its shortest window is 15m", 90 * day, Severities, 30 * time.Second, "5m"},
		{"ticket-only 90d stays at 5m, never hours", 90 * day, []string{"ticket"}, 30 * time.Second, "5m"},
		{"7d is raised to four 30s scrapes", 7 * day, Severities, 30 * time.Second, "2m"},
		{"no tiers at all fall back to 5m", 28 * day, nil, 15 * time.Second, "5m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, err := WorkbookTiersOf(Severities, tt.window, 4*tt.scrape, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			var kept []Tier
			for _, tier := range all {
				for _, s := range tt.tiers {
					if tier.Severity == s {
						kept = append(kept, tier)
					}
				}
			}
			slo := SLO{Window: tt.window, ScrapeInterval: tt.scrape, Alerting: Alerting{Tiers: kept}}
			if got := FormatDuration(slo.BaseWindow()); got != tt.want {
				t.Errorf("base window = %s, want %s", got, tt.want)
			}
		})
	}
}
