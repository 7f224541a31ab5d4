package model

import (
	"fmt"
	"time"
)

// Calendar makes an SLO's window a calendar period that starts afresh at
// each boundary (a month, a quarter, whole weeks or days) instead of
// rolling. The SLO's Window then holds the period's nominal length (30d for
// a month, 90d for a quarter), which the burn-rate tiers are scaled by.
type Calendar struct {
	// Unit is "M" (month), "Q" (quarter), "w" (week) or "d" (day), as in
	// OpenSLO duration shorthands.
	Unit string
	// Count is the number of units per period; months and quarters take 1.
	Count int
	// Anchor is the start of one period; the others follow from it.
	Anchor time.Time
	// Offset is the UTC offset, in seconds, at which boundaries are drawn:
	// local midnight is UTC midnight minus Offset.
	Offset int
	// Zone is the time zone as written in the spec.
	Zone string
	// DST is set when Zone changes its offset over the year: boundaries are
	// then drawn at Offset (the zone's offset at Anchor) all year.
	DST bool
}

// Label is the period as an OpenSLO duration shorthand: "1M", "2w".
// WindowText names the SLO's window for people: "28d", or "calendar month".
func (s SLO) WindowText() string {
	if s.Calendar != nil {
		return s.Calendar.Name()
	}
	return FormatDuration(s.Window)
}

// WindowLabel is the window label value of the SLO window's recordings:
// "28d", or the calendar period's shorthand ("1M").
func (s SLO) WindowLabel() string {
	if s.Calendar != nil {
		return s.Calendar.Label()
	}
	return FormatDuration(s.Window)
}

func (c Calendar) Label() string { return fmt.Sprintf("%d%s", c.Count, c.Unit) }

// Name says the period in words, for titles and descriptions.
func (c Calendar) Name() string {
	switch {
	case c.Unit == "M":
		return "calendar month"
	case c.Unit == "Q":
		return "calendar quarter"
	case c.Unit == "w" && c.Count == 1:
		return "calendar week"
	case c.Unit == "d" && c.Count == 1:
		return "calendar day"
	case c.Unit == "w":
		return fmt.Sprintf("period of %d calendar weeks", c.Count)
	}
	return fmt.Sprintf("period of %d calendar days", c.Count)
}

// Fixed is the length of periods of weeks and days; zero for months and
// quarters, whose length varies.
func (c Calendar) Fixed() time.Duration {
	switch c.Unit {
	case "w":
		return time.Duration(c.Count) * 7 * 24 * time.Hour
	case "d":
		return time.Duration(c.Count) * 24 * time.Hour
	}
	return 0
}

// Nominal is the length the burn-rate tiers are scaled by: 30d for a
// month, 90d for a quarter, the exact length otherwise.
func (c Calendar) Nominal() time.Duration {
	switch c.Unit {
	case "M":
		return 30 * 24 * time.Hour
	case "Q":
		return 90 * 24 * time.Hour
	}
	return c.Fixed()
}

// Longest is the longest period there can be: 31d for a month, 92d for a
// quarter. Queries over the period look back this far.
func (c Calendar) Longest() time.Duration {
	switch c.Unit {
	case "M":
		return 31 * 24 * time.Hour
	case "Q":
		return 92 * 24 * time.Hour
	}
	return c.Fixed()
}

// Bounds returns the period that contains t: its start (inclusive) and end
// (exclusive), with boundaries drawn at the fixed Offset. It is the
// reference the generated PromQL is tested against.
func (c Calendar) Bounds(t time.Time) (time.Time, time.Time) {
	if d := c.Fixed(); d > 0 {
		since := t.Sub(c.Anchor) % d
		if since < 0 {
			since += d
		}
		start := t.Add(-since)
		return start, start.Add(d)
	}
	zone := time.FixedZone("", c.Offset)
	l := t.In(zone)
	month := l.Month()
	months := 1
	if c.Unit == "Q" {
		month -= (month - 1) % 3
		months = 3
	}
	start := time.Date(l.Year(), month, 1, 0, 0, 0, 0, zone)
	return start.UTC(), start.AddDate(0, months, 0).UTC()
}
