package spec

import (
	"cmp"
	"time"

	// Time zone names resolve the same on every machine, with or without a
	// system zoneinfo database.
	_ "time/tzdata"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
)

// maxCalendarWeeks keeps a period of weeks within the longest window.
const maxCalendarWeeks = 12

// calendarWindow reads a calendar time window: a period that starts afresh
// at each boundary. Boundaries are drawn at the zone's UTC offset at
// startTime; zones with daylight saving time get a warning saying so.
func calendarWindow(o object[v1.SLO], tw v1.SLOTimeWindow, ps *Problems) *model.Calendar {
	const path = "spec.timeWindow[0]"
	if tw.IsRolling {
		*ps = append(*ps, o.errorf(path+".isRolling", "a window with a calendar does not roll; set isRolling: false, or drop calendar for a rolling window"))
		return nil
	}
	if tw.Calendar == nil {
		*ps = append(*ps, o.errorf(path+".calendar", "required when isRolling is false: calendar: {startTime: \"2026-01-01 00:00:00\", timeZone: UTC}"))
		return nil
	}
	cal := &model.Calendar{Unit: string(tw.Duration.GetUnit()), Count: tw.Duration.GetValue(), Zone: tw.Calendar.TimeZone}
	switch {
	case cal.Unit == "Y":
		*ps = append(*ps, o.errorf(path+".duration", "calendar years are not supported: the period's SLI would read a year of recordings at every evaluation; use 1Q"))
		return nil
	case (cal.Unit == "M" || cal.Unit == "Q") && cal.Count != 1:
		*ps = append(*ps, o.errorf(path+".duration", "%s: calendar months and quarters come one at a time; use 1M or 1Q", tw.Duration))
		return nil
	case cal.Unit == "w" && (cal.Count < 1 || cal.Count > maxCalendarWeeks), cal.Unit == "d" && (cal.Count < 1 || cal.Count > int(maxWindow/(24*time.Hour))):
		*ps = append(*ps, o.errorf(path+".duration", "%s is outside the supported calendar periods, 1d to 90d or 1w to %dw", tw.Duration, maxCalendarWeeks))
		return nil
	case cal.Unit != "M" && cal.Unit != "Q" && cal.Unit != "w" && cal.Unit != "d":
		*ps = append(*ps, o.errorf(path+".duration", "%s: a calendar period is counted in days (d), weeks (w), months (1M) or quarters (1Q)", tw.Duration))
		return nil
	}
	loc, err := time.LoadLocation(tw.Calendar.TimeZone)
	if err != nil || tw.Calendar.TimeZone == "" {
		*ps = append(*ps, o.errorf(path+".calendar.timeZone", "%q is not an IANA time zone such as UTC, Europe/Berlin or Asia/Kolkata", tw.Calendar.TimeZone))
		return nil
	}
	start, err := time.ParseInLocation(time.DateTime, tw.Calendar.StartTime, loc)
	if err != nil {
		*ps = append(*ps, o.errorf(path+".calendar.startTime", "%q is not a time such as \"2026-01-01 00:00:00\"", tw.Calendar.StartTime))
		return nil
	}
	if cal.Unit == "M" || cal.Unit == "Q" {
		if start.Day() != 1 || start.Hour() != 0 || start.Minute() != 0 || start.Second() != 0 || cal.Unit == "Q" && (start.Month()-1)%3 != 0 {
			*ps = append(*ps, o.errorf(path+".calendar.startTime", "%q: calendar %s begin at midnight on the first day of %s, such as \"2026-01-01 00:00:00\"",
				tw.Calendar.StartTime, map[string]string{"M": "months", "Q": "quarters"}[cal.Unit], map[string]string{"M": "a month", "Q": "January, April, July or October"}[cal.Unit]))
			return nil
		}
	}
	cal.Anchor = start.UTC()
	_, cal.Offset = start.Zone()
	for m := 0; m < 12; m++ {
		if _, off := start.AddDate(0, m, 0).Zone(); off != cal.Offset {
			cal.DST = true
		}
	}
	if cal.DST {
		*ps = append(*ps, o.warnf(path+".calendar.timeZone", "%s changes its UTC offset during the year; period boundaries stay at its offset on startTime (UTC%s), so they fall an hour off local midnight while the offset differs; a fixed-offset zone such as UTC or Etc/GMT-1 is exact",
			tw.Calendar.TimeZone, start.Format("-07:00")))
	}
	return cal
}

// timeWindow is the OpenSLO time window of a shorthand spec: rolling, or a
// calendar period with the shorthand's defaults filled in.
func (s Shorthand) timeWindow(d v1.DurationShorthand) v1.SLOTimeWindow {
	c := s.Spec.Calendar
	if c == nil {
		return v1.SLOTimeWindow{Duration: d, IsRolling: true}
	}
	cal := v1.SLOCalendar{StartTime: c.StartTime, TimeZone: c.TimeZone}
	cal.StartTime = cmp.Or(cal.StartTime, "2024-01-01 00:00:00")
	cal.TimeZone = cmp.Or(cal.TimeZone, "UTC")
	return v1.SLOTimeWindow{Duration: d, Calendar: &cal}
}
