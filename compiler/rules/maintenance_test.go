package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/inferslo/inferslo/compiler/model"
)

// TestTheMaintenanceRecordingIsOpenExactlyWhenTheWindowIs evaluates the
// recording of each kind of window in Prometheus' engine every 10 minutes
// over two weeks, and at each window's edges, against the window's own
// arithmetic (model.Maintenance.Active).
func TestTheMaintenanceRecordingIsOpenExactlyWhenTheWindowIs(t *testing.T) {
	start := time.Date(2026, 3, 22, 0, 0, 0, 0, time.UTC) // a Sunday
	windows := []struct {
		name string
		m    model.Maintenance
	}{
		{"every day at 02:00 UTC for an hour", model.Maintenance{Minute: 120, Duration: time.Hour}},
		{"saturdays at 22:30 at UTC+2 for four hours, past local midnight", model.Maintenance{Minute: 22*60 + 30, Days: []int{6}, Duration: 4 * time.Hour, Offset: 2 * 3600}},
		{"weekdays at 23:00 at UTC-5 for two hours", model.Maintenance{Minute: 23 * 60, Days: []int{1, 2, 3, 4, 5}, Duration: 2 * time.Hour, Offset: -5 * 3600}},
		{"sundays and wednesdays at 00:00 at UTC+5:30 for a whole day", model.Maintenance{Days: []int{0, 3}, Duration: 24 * time.Hour, Offset: 5*3600 + 1800}},
		{"a one-off range", model.Maintenance{Start: start.Add(50*time.Hour + 15*time.Minute), End: start.Add(53 * time.Hour)}},
		// Central European time changes to summer time on 2026-03-29 at
		// 01:00 UTC, in the second week.
		{"every day at 22:00 in Berlin, before and after summer time begins", model.Maintenance{Minute: 22 * 60, Duration: time.Hour, Offset: 3600,
			Shifts: []model.OffsetShift{{At: time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC).Unix(), Offset: 7200}, {At: time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC).Unix(), Offset: 3600}}}},
		{"sundays at 00:30 in Berlin for two hours, across the hour summer time skips", model.Maintenance{Minute: 30, Days: []int{0}, Duration: 2 * time.Hour, Offset: 3600,
			Shifts: []model.OffsetShift{{At: time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC).Unix(), Offset: 7200}}}},
	}
	ll, err := promqltest.NewLazyLoader("load 1m\n  x 0", promqltest.LazyLoaderOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer ll.Close()
	for _, w := range windows {
		t.Run(w.name, func(t *testing.T) {
			expr := MaintenanceExpr([]model.Maintenance{w.m})
			times := []time.Time{}
			for at := start; at.Before(start.Add(14 * 24 * time.Hour)); at = at.Add(10 * time.Minute) {
				times = append(times, at)
			}
			open := 0
			for from := start; ; {
				s, ok := w.m.Next(from)
				if !ok || s.After(start.Add(14*24*time.Hour)) {
					break
				}
				e := s.Add(w.m.Length())
				times = append(times, s.Add(-time.Second), s, e.Add(-time.Second), e)
				open++
				from = s.Add(time.Second)
			}
			if open == 0 {
				t.Fatal("the window never opens in two weeks")
			}
			for _, at := range times {
				want := 0.0
				if w.m.Active(at) {
					want = 1
				}
				if got := instant(t, ll, expr, at); got != want {
					t.Fatalf("at %s: %s = %v, want %v", at, expr, got, want)
				}
			}
		})
	}
}

// Every base rate of an SLO with a maintenance window reads the window's
// recording, recorded ahead of it; an SLO without windows records none.
func TestOnlyAnSLOWithMaintenanceWindowsReadsTheRecording(t *testing.T) {
	slo := model.SLO{Name: "x", Service: model.Service{Name: "s"}, Objective: model.NewDecimal(99, 100), Window: 28 * 24 * time.Hour, Evaluation: time.Minute,
		SLI: model.SLI{Counter: true, Total: &model.Query{Expr: `req_total`}, Bad: &model.Query{Expr: `req_total{code="500"}`}}}
	raw := model.SLI{Raw: &model.Query{Expr: `avg(availability{job="gateway"})`}, RawType: "success"}
	for _, tt := range []struct {
		name    string
		sli     *model.SLI
		windows []model.Maintenance
		want    int
	}{
		{"no windows: no recording and no join", nil, nil, 0},
		{"a window: the recording first, joined into both base rates", nil, []model.Maintenance{{Minute: 60, Duration: time.Hour}}, 3},
		{"a raw ratio's base ratio leaves the window out too", &raw, []model.Maintenance{{Minute: 60, Duration: time.Hour}}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := slo
			if tt.sli != nil {
				s.SLI = *tt.sli
			}
			s.Alerting.Maintenance = tt.windows
			g, err := Group(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := Validate([]rulefmt.RuleGroup{g}); err != nil {
				t.Fatalf("the group does not validate: %v", err)
			}
			n := 0
			for i, r := range g.Rules {
				if r.Record == model.MaintenanceActive && i != 0 {
					t.Errorf("the recording is rule %d, not the first", i)
				}
				if r.Record == model.MaintenanceActive || strings.Contains(r.Expr, model.MaintenanceActive) {
					n++
				}
			}
			if n != tt.want {
				t.Errorf("%d rules record or read the window, want %d", n, tt.want)
			}
		})
	}
}
