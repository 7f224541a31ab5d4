package backtest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	prommodel "github.com/prometheus/common/model"
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

// ParsePeriod reads a calendar period given on the command line, in UTC: a
// month (2026-10) or a quarter (2026-Q4). A period still running ends now;
// one not yet begun is refused.
func ParsePeriod(s string, now time.Time) (from, to time.Time, err error) {
	invalid := fmt.Errorf("%q is not a period; valid: a month (2026-10) or a quarter (2026-Q4), in UTC", s)
	if y, q, ok := strings.Cut(s, "-Q"); ok {
		year, err1 := strconv.Atoi(y)
		n, err2 := strconv.Atoi(q)
		if err1 != nil || err2 != nil || len(y) != 4 || n < 1 || n > 4 {
			return time.Time{}, time.Time{}, invalid
		}
		from = time.Date(year, time.Month(3*n-2), 1, 0, 0, 0, 0, time.UTC)
		to = from.AddDate(0, 3, 0)
	} else {
		m, err := time.Parse("2006-01", s)
		if err != nil {
			return time.Time{}, time.Time{}, invalid
		}
		from, to = m, m.AddDate(0, 1, 0)
	}
	if !from.Before(now) {
		return time.Time{}, time.Time{}, fmt.Errorf("%s has not begun; valid: a period before now", s)
	}
	if to.After(now) {
		to = now
	}
	return from, to, nil
}
