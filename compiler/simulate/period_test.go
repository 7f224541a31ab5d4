package simulate

import (
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/spec"
)

// TestCalendarPeriodRatioIsChecked replays the period check of calendar-month
// SLOs (UTC, whose period begins with the run, and Asia/Kolkata, whose began
// hours before it) and of a quarter, whose period steps by quarter-hour
// tiles of five-minute ones: it passes on the generated rules and fails on
// a filter that drops the period's first tiles.
func TestCalendarPeriodRatioIsChecked(t *testing.T) {
	t.Parallel()
	utc := monthly(t)
	kolkata := utc
	cal := *utc.Calendar
	cal.Offset = 19800
	kolkata.Calendar = &cal
	quarter := kolkata
	qcal := cal
	qcal.Unit = "Q"
	quarter.Calendar = &qcal
	tests := []struct {
		name  string
		slo   model.SLO
		edit  func(string) string
		holds bool
	}{
		{"a UTC month's ratio counts from the boundary the run starts on", utc, nil, true},
		{"a month that began before the run counts from its first tile", kolkata, nil, true},
		{"a quarter that began before the run counts from its first quarter-hour tile, in part recorded", quarter, nil, true},
		{"a filter dropping the period's first tiles misses the truth", utc, func(s string) string {
			return strings.ReplaceAll(s, " - 300 >= on () group_left ()", " - 1500 >= on () group_left ()")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := irules.Build(model.Set{SLOs: []model.SLO{tt.slo}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.edit != nil {
				edited := tt.edit(string(files[0].Data))
				if edited == string(files[0].Data) {
					t.Fatal("the edit changed nothing")
				}
				files[0].Data = []byte(edited)
			}
			x, err := prom.IndexRules(files)
			if err != nil {
				t.Fatal(err)
			}
			s := &sloSim{slo: tt.slo, rules: x.ByName()[irules.GroupName(tt.slo)], opts: Options{}.withDefaults()}
			defer s.close()
			c, err := s.periodRatio()
			if err != nil {
				t.Fatal(err)
			}
			if c.Pass != tt.holds || !strings.Contains(c.Subject, `window="`+tt.slo.Calendar.Label()+`"`) {
				t.Errorf("check %s: pass = %v, want %v; expected %s, observed %s", c.Subject, c.Pass, tt.holds, c.Expected, c.Observed)
			}
		})
	}
}

// TestTheZeroTrafficScenarioWaitsForAPeriodThatBeginsAtItsEnd: a month at
// UTC-5 begins at 05:00 UTC, when the zero-traffic scenario ended, so its
// ratio had no tile yet and the check missed one window.
func TestTheZeroTrafficScenarioWaitsForAPeriodThatBeginsAtItsEnd(t *testing.T) {
	t.Parallel()
	slo := monthly(t)
	cal := *slo.Calendar
	cal.Offset = -5 * 3600
	slo.Calendar = &cal
	if start, _ := cal.Bounds(prom.Epoch().Add(5 * time.Hour)); !start.Equal(prom.Epoch().Add(5 * time.Hour)) {
		t.Fatalf("the period begins at %v, want the scenario's end", start)
	}
	s := simOf(t, slo, slo)
	defer s.close()
	checks, err := s.zeroTraffic()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.Pass {
			t.Errorf("%s: expected %s, observed %s", c.Subject, c.Expected, c.Observed)
		}
	}
}

// monthly is the calendar-month SLO of testdata/calendar, in UTC.
func monthly(t *testing.T) model.SLO {
	t.Helper()
	res, err := spec.Load("../../testdata/calendar/api-monthly.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res.Set.SLOs[0]
}
