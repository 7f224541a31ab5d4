package backtest

import (
	"fmt"
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
