package backtest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	prommodel "github.com/prometheus/common/model"

	"github.com/inferslo/inferslo/compiler/model"
)

// ParseTime reads a time given on the command line: RFC 3339
// (2026-01-31T00:00:00Z), "now", or a duration back from now (-30d, -12h).
func ParseTime(s string, now time.Time) (time.Time, error) {
	switch {
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-"):
		d, err := prommodel.ParseDuration(s[1:])
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a time; valid: RFC 3339 (2026-01-31T00:00:00Z), now, or a duration back from now (-30d, -12h)", s)
		}
		return now.Add(-time.Duration(d)), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a time; valid: RFC 3339 (2026-01-31T00:00:00Z), now, or a duration back from now (-30d, -12h)", s)
	}
	return t, nil
}

// ParsePeriod reads a calendar period given on the command line: a month
// (2026-10) or a quarter (2026-Q4), its boundaries those model.Calendar
// draws at the fixed UTC offset given in seconds (0 for UTC), as the rules'
// period series do. A period still running ends now; one not yet begun is
// refused.
func ParsePeriod(s string, now time.Time, offset int) (from, to time.Time, err error) {
	invalid := fmt.Errorf("%q is not a period; valid: a month (2026-10) or a quarter (2026-Q4)", s)
	cal := model.Calendar{Unit: "M", Count: 1, Offset: offset}
	var first time.Time
	if y, q, ok := strings.Cut(s, "-Q"); ok {
		year, err1 := strconv.Atoi(y)
		n, err2 := strconv.Atoi(q)
		if err1 != nil || err2 != nil || len(y) != 4 || n < 1 || n > 4 {
			return time.Time{}, time.Time{}, invalid
		}
		cal.Unit, first = "Q", time.Date(year, time.Month(3*n-2), 1, 0, 0, 0, 0, time.UTC)
	} else if first, err = time.Parse("2006-01", s); err != nil {
		return time.Time{}, time.Time{}, invalid
	}
	// Noon of the period's first local day lies inside it at any offset.
	from, to = cal.Bounds(first.Add(12*time.Hour - time.Duration(offset)*time.Second))
	if !from.Before(now) {
		return time.Time{}, time.Time{}, fmt.Errorf("%s has not begun; valid: a period before now", s)
	}
	if to.After(now) {
		to = now
	}
	return from, to, nil
}

// PeriodOffset is the UTC offset, in seconds, at which a report's periods
// begin: that of the set's calendar windows, so a month reported is the
// month their rules record (inferslo:period_start:timestamp), or UTC
// without one. Calendar windows drawn at two offsets have no period in
// common.
func PeriodOffset(set model.Set) (int, error) {
	var first *model.SLO
	for i, slo := range set.SLOs {
		if slo.Calendar == nil {
			continue
		}
		if first == nil {
			first = &set.SLOs[i]
			continue
		}
		if slo.Calendar.Offset != first.Calendar.Offset {
			return 0, fmt.Errorf("SLO %s draws its calendar periods at UTC%s (%s) and SLO %s at UTC%s (%s), so no period is both of theirs; valid: report the specs of each time zone separately",
				first.Name, offsetText(first.Calendar.Offset), first.Calendar.Zone, slo.Name, offsetText(slo.Calendar.Offset), slo.Calendar.Zone)
		}
	}
	if first == nil {
		return 0, nil
	}
	return first.Calendar.Offset, nil
}

// offsetText writes an offset as +05:30.
func offsetText(offset int) string {
	return time.Unix(0, 0).In(time.FixedZone("", offset)).Format("-07:00")
}
