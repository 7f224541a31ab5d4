package model

import (
	"slices"
	"time"
)

// Maintenance is a planned window whose events are left out of the SLI,
// the budget and every burn alert: recurring (a time of day on some days of
// the week, at a fixed UTC offset) or one-off (Start to End).
type Maintenance struct {
	// Recurring windows: the start's minute of the day (0-1439) in the
	// zone, the days of the week it starts on (0 Sunday to 6 Saturday;
	// empty every day), and how long it lasts (up to a day).
	Minute   int
	Days     []int
	Duration time.Duration
	// Offset is the zone's UTC offset in seconds: local time is UTC plus
	// Offset, until the first of Shifts.
	Offset int
	// Shifts are the zone's changes of offset (daylight saving time), in
	// order; empty for a zone that keeps one offset.
	Shifts []OffsetShift
	// One-off windows: Start included, End excluded. Zero for a recurring
	// window.
	Start, End time.Time
}

// OffsetShift is a change of a zone's UTC offset: from the Unix second At
// on, local time is UTC plus Offset seconds.
type OffsetShift struct {
	At     int64
	Offset int
}

// OffsetAt is the zone's UTC offset in seconds at the Unix second u.
func (m Maintenance) OffsetAt(u int64) int {
	off := m.Offset
	for _, s := range m.Shifts {
		if u < s.At {
			break
		}
		off = s.Offset
	}
	return off
}

// Recurring tells a recurring window from a one-off one.
func (m Maintenance) Recurring() bool { return m.Start.IsZero() }

// on says whether a recurring window starts on the local day of the week.
func (m Maintenance) on(day int) bool { return len(m.Days) == 0 || slices.Contains(m.Days, day) }

// Active says whether t lies inside the window, as the recording of the
// window computes it.
func (m Maintenance) Active(t time.Time) bool {
	if !m.Recurring() {
		return !t.Before(m.Start) && t.Before(m.End)
	}
	local := t.Unix() + int64(m.OffsetAt(t.Unix()))
	secs := local % 86400
	if secs < 0 {
		secs += 86400
	}
	start, end := int64(m.Minute)*60, int64(m.Minute)*60+int64(m.Duration/time.Second)
	day := func(u int64) int { return int(time.Unix(u, 0).UTC().Weekday()) }
	if secs >= start && secs < end && m.on(day(local)) {
		return true
	}
	// A window that began yesterday and runs past midnight.
	return secs < end-86400 && m.on(day(local-86400))
}

// Next is the first start of the window at or after t; false when a
// one-off window has started before t.
func (m Maintenance) Next(t time.Time) (time.Time, bool) {
	if !m.Recurring() {
		return m.Start, !m.Start.Before(t)
	}
	local := t.UTC().Add(time.Duration(m.OffsetAt(t.Unix())) * time.Second)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC)
	for d := -1; d <= 8; d++ {
		day := midnight.AddDate(0, 0, d)
		s := day.Add(time.Duration(m.Minute) * time.Minute)
		// The local start's UTC time, at the offset in force then.
		off := m.OffsetAt(s.Unix() - int64(m.OffsetAt(s.Unix()-int64(m.Offset))))
		at := s.Add(-time.Duration(off) * time.Second)
		if m.on(int(day.Weekday())) && !at.Before(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// Length is how long one occurrence of the window lasts.
func (m Maintenance) Length() time.Duration {
	if m.Recurring() {
		return m.Duration
	}
	return m.End.Sub(m.Start)
}

// Closed says whether every window is closed at each minute of [from, to].
func Closed(ms []Maintenance, from, to time.Time) bool {
	for t := from; !t.After(to); t = t.Add(time.Minute) {
		for _, m := range ms {
			if m.Active(t) {
				return false
			}
		}
	}
	return true
}
