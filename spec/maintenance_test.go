package spec

import (
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// A recurring window in a zone with daylight saving time opens at the
// same wall-clock time all year, by the zone's own rules, through 2040;
// fixed offsets and zones without changes have no shifts.
func TestAWindowInAZoneWithSummerTimeKeepsItsWallClockTime(t *testing.T) {
	tests := []struct {
		name, zone string
		shifts     int
	}{
		{"Berlin changes twice a year", "Europe/Berlin", 30},
		{"New York changes twice a year", "America/New_York", 30},
		{"Sydney's summer is the northern winter", "Australia/Sydney", 30},
		{"Kolkata keeps one offset", "Asia/Kolkata", 0},
		{"a fixed offset has no changes", "-03:30", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offset, shifts, msg := zoneOffset(tt.zone)
			if msg != "" {
				t.Fatal(msg)
			}
			if len(shifts) != tt.shifts {
				t.Fatalf("%d changes of offset from 2026 to 2040, want %d", len(shifts), tt.shifts)
			}
			loc, err := time.LoadLocation(tt.zone)
			if err != nil {
				loc = time.FixedZone(tt.zone, offset)
			}
			// Every day at 21:30 local for an hour.
			m := model.Maintenance{Minute: 21*60 + 30, Duration: time.Hour, Offset: offset, Shifts: shifts}
			for at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); at.Before(time.Date(2041, 1, 1, 0, 0, 0, 0, time.UTC)); at = at.Add(97 * time.Minute) {
				l := at.In(loc)
				minute := l.Hour()*60 + l.Minute()
				want := minute >= 21*60+30 && minute < 22*60+30
				if got := m.Active(at); got != want {
					t.Fatalf("at %s (%s local) the window is open = %v, want %v", at, l.Format("2006-01-02 15:04 MST"), got, want)
				}
				if next, ok := m.Next(at); !ok || next.In(loc).Hour()*60+next.In(loc).Minute() != 21*60+30 || next.Before(at) {
					t.Fatalf("after %s the window next opens at %s (%s local)", at, next, next.In(loc).Format("15:04 MST"))
				}
			}
		})
	}
}
