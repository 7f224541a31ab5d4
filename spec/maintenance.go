package spec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
)

// AnnotationMaintenance holds an SLO's planned maintenance windows as a
// JSON list, the shorthand's spec.alerting.maintenance.
const AnnotationMaintenance = annotationPrefix + "maintenance" // [{"schedule":"0 2 * * 6","timeZone":"+01:00","duration":"2h"},{"start":"...","end":"..."}]

// maxMaintenance bounds the windows of one SLO: each is a term of the
// recording every base rate reads.
const maxMaintenance = 20

// ShorthandMaintenance is one planned window: recurring (schedule,
// duration and a time zone) or one-off (start and end, RFC 3339).
type ShorthandMaintenance struct {
	// Schedule is cron-like: "MINUTE HOUR * * DAYS", such as "0 2 * * 6"
	// (Saturdays at 02:00).
	Schedule string `yaml:"schedule,omitempty" json:"schedule,omitempty"`
	// TimeZone is UTC (the default), a fixed offset (+05:30), or an IANA
	// zone (Europe/Berlin), daylight saving time included through 2040.
	TimeZone string `yaml:"timeZone,omitempty" json:"timeZone,omitempty"`
	Duration string `yaml:"duration,omitempty" json:"duration,omitempty"`
	Start    string `yaml:"start,omitempty" json:"start,omitempty"`
	End      string `yaml:"end,omitempty" json:"end,omitempty"`
}

// maintenanceWindows resolves the SLO's maintenance windows, reporting
// each problem at its property.
func maintenanceWindows(o object[v1.SLO], s model.SLO, a *model.Alerting, ps *Problems) {
	path := "metadata.annotations." + AnnotationMaintenance
	if extensionProblem(o, AnnotationMaintenance, ps) {
		return
	}
	ws := o.ext.Maintenance
	if len(ws) == 0 {
		return
	}
	if len(ws) > maxMaintenance {
		*ps = append(*ps, o.errorf(path, "%d windows; valid: at most %d", len(ws), maxMaintenance))
		return
	}
	if s.Timeslices != nil {
		*ps = append(*ps, o.errorf(path, "maintenance windows leave events out of an SLI of counted events or a ratio; SLO %s is budgeted by time slices", s.Name))
		return
	}
	var out []model.Maintenance
	for i, w := range ws {
		if m, ok := maintenanceWindow(o, fmt.Sprintf("%s[%d]", path, i), w, ps); ok {
			out = append(out, m)
		}
	}
	if len(out) == len(ws) {
		a.Maintenance = out
	}
}

func maintenanceWindow(o object[v1.SLO], path string, w ShorthandMaintenance, ps *Problems) (model.Maintenance, bool) {
	bad := func(field, format string, args ...any) (model.Maintenance, bool) {
		*ps = append(*ps, o.errorf(path+field, format, args...))
		return model.Maintenance{}, false
	}
	if w.Schedule == "" {
		if w.Start == "" || w.End == "" {
			return bad("", "a window is recurring (schedule and duration, such as {schedule: \"0 2 * * 6\", duration: 2h}) or one-off (start and end, RFC 3339)")
		}
		if w.Duration != "" || w.TimeZone != "" {
			return bad("", "a one-off window is start to end, each RFC 3339 with its own offset; duration and timeZone belong to a schedule")
		}
		start, err := time.Parse(time.RFC3339, w.Start)
		if err != nil {
			return bad(".start", "%q is not an RFC 3339 time such as 2026-10-03T02:00:00+02:00", w.Start)
		}
		end, err := time.Parse(time.RFC3339, w.End)
		if err != nil {
			return bad(".end", "%q is not an RFC 3339 time such as 2026-10-03T04:00:00+02:00", w.End)
		}
		if !end.After(start) {
			return bad(".end", "%s is not after start %s", w.End, w.Start)
		}
		return model.Maintenance{Start: start.UTC(), End: end.UTC()}, true
	}
	if w.Start != "" || w.End != "" {
		return bad("", "a window is recurring (schedule) or one-off (start and end), not both")
	}
	minute, days, msg := parseSchedule(w.Schedule)
	if msg != "" {
		return bad(".schedule", "%q %s; valid: \"MINUTE HOUR * * DAYS\", minute 0-59 and hour 0-23 as numbers, days * or a list of days of the week (0-7, 0 and 7 Sunday, ranges 1-5, names mon-sun), such as \"30 2 * * sat,sun\"", w.Schedule, msg)
	}
	d, err := model.ParseDuration(w.Duration)
	if err != nil || d < time.Minute || d > 24*time.Hour {
		return bad(".duration", "%q; valid: a duration from 1m to 24h, such as 2h", w.Duration)
	}
	offset, shifts, msg := zoneOffset(w.TimeZone)
	if msg != "" {
		return bad(".timeZone", "%s", msg)
	}
	return model.Maintenance{Minute: minute, Days: days, Duration: d, Offset: offset, Shifts: shifts}, true
}

// dayNames are the days of the week by cron's three-letter names.
var dayNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// parseSchedule reads "MINUTE HOUR * * DAYS": the minute of the day the
// window starts and its days of the week (nil: every day), or why not.
func parseSchedule(s string) (int, []int, string) {
	f := strings.Fields(s)
	if len(f) != 5 {
		return 0, nil, fmt.Sprintf("has %d fields, not 5", len(f))
	}
	minute, err := strconv.Atoi(f[0])
	if err != nil || minute < 0 || minute > 59 {
		return 0, nil, fmt.Sprintf("has minute %q", f[0])
	}
	hour, err := strconv.Atoi(f[1])
	if err != nil || hour < 0 || hour > 23 {
		return 0, nil, fmt.Sprintf("has hour %q", f[1])
	}
	if f[2] != "*" || f[3] != "*" {
		return 0, nil, "names days of the month or months, which windows do not repeat by"
	}
	if f[4] == "*" {
		return hour*60 + minute, nil, ""
	}
	day := func(x string) (int, bool) {
		if d, ok := dayNames[strings.ToLower(x)]; ok {
			return d, true
		}
		d, err := strconv.Atoi(x)
		return d % 7, err == nil && d >= 0 && d <= 7
	}
	set := [7]bool{}
	for _, item := range strings.Split(f[4], ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		a, ok := day(lo)
		if !ok {
			return 0, nil, fmt.Sprintf("has day %q", lo)
		}
		b := a
		if isRange {
			if b, ok = day(hi); !ok {
				return 0, nil, fmt.Sprintf("has day %q", hi)
			}
			if hi == "7" {
				b = 7
			}
			if b < a {
				return 0, nil, fmt.Sprintf("has the range %q running backwards", item)
			}
		}
		for d := a; d <= b; d++ {
			set[d%7] = true
		}
	}
	var days []int
	for d, on := range set {
		if on {
			days = append(days, d)
		}
	}
	if len(days) == 7 {
		days = nil
	}
	return hour*60 + minute, days, ""
}

// The years a zone's changes of offset are written out for, from the
// first to before the last: the recording holds a term per change, so it
// covers a fixed span (the same output whenever it is compiled), after
// which the last offset stays.
const shiftsFrom, shiftsUntil = 2026, 2041

// zoneOffset reads a time zone: UTC, a fixed offset such as +05:30, or an
// IANA zone, whose offset at the start of 2026 and changes of offset (daylight
// saving time) through 2040 it returns; or why not.
func zoneOffset(zone string) (int, []model.OffsetShift, string) {
	if zone == "" || zone == "UTC" || zone == "Z" {
		return 0, nil, ""
	}
	if t, err := time.Parse("-07:00", zone); err == nil {
		_, off := t.Zone()
		return off, nil, ""
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return 0, nil, fmt.Sprintf("%q is not a time zone; valid: UTC, a fixed offset such as +05:30, or an IANA zone such as Europe/Berlin or Asia/Kolkata", zone)
	}
	at := time.Date(shiftsFrom, 1, 1, 0, 0, 0, 0, time.UTC).In(loc)
	until := time.Date(shiftsUntil, 1, 1, 0, 0, 0, 0, time.UTC)
	_, off := at.Zone()
	var shifts []model.OffsetShift
	prev := off
	for {
		_, end := at.ZoneBounds()
		if end.IsZero() || !end.Before(until) {
			break
		}
		if !end.After(at) {
			// Go's bounds of a zone's rule-made years can end where they
			// start (the last day of a leap year): step past it.
			end = at.Add(24 * time.Hour)
		}
		at = end
		if _, o := at.Zone(); o != prev {
			shifts = append(shifts, model.OffsetShift{At: at.Unix(), Offset: o})
			prev = o
		}
	}
	return off, shifts, ""
}
