package spec

import (
	"fmt"
	"math"
	"strconv"
	"time"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
)

// openSLOUnits are the units of an OpenSLO duration shorthand with their
// lengths, as the SDK's Duration reads them.
func openSLOUnit(u v1.DurationShorthandUnit) (time.Duration, bool) {
	switch u {
	case v1.DurationShorthandUnitMinute:
		return time.Minute, true
	case v1.DurationShorthandUnitHour:
		return time.Hour, true
	case v1.DurationShorthandUnitDay:
		return 24 * time.Hour, true
	case v1.DurationShorthandUnitWeek:
		return 7 * 24 * time.Hour, true
	case v1.DurationShorthandUnitMonth:
		return 30 * 24 * time.Hour, true
	case v1.DurationShorthandUnitQuarter:
		return 90 * 24 * time.Hour, true
	case v1.DurationShorthandUnitYear:
		return 365 * 24 * time.Hour, true
	}
	return 0, false
}

// openSLODuration is the one reading of an OpenSLO duration shorthand,
// for the shorthand's expansion and plain OpenSLO alike. The SDK's
// Duration panics on a unit it does not know (the zero value, or the
// ".5d" its scanner leaves of "1.5d"); this reports false instead, and for
// a negative value or one past time.Duration's range.
func openSLODuration(d v1.DurationShorthand) (time.Duration, bool) {
	unit, ok := openSLOUnit(d.GetUnit())
	v := d.GetValue()
	if !ok || v < 0 || int64(v) > math.MaxInt64/int64(unit) {
		return 0, false
	}
	return time.Duration(v) * unit, true
}

// parseOpenSLODuration reads a duration the shorthand hands to OpenSLO:
// a positive whole number and one unit of m, h, d, w, M, Q or Y, and
// nothing else (the SDK's own parser takes "1.5d" as 1 of the unit ".5d").
// What it accepts, openSLODuration reads.
func parseOpenSLODuration(s string) (v1.DurationShorthand, time.Duration, error) {
	bad := fmt.Errorf("%q is not an OpenSLO duration: write a whole number and a unit m, h, d or w, such as 28d", s)
	if len(s) < 2 || len(s) > 12 {
		return v1.DurationShorthand{}, 0, bad
	}
	unit := v1.DurationShorthandUnit(s[len(s)-1:])
	digits := s[:len(s)-1]
	for _, c := range digits {
		if c < '0' || c > '9' {
			return v1.DurationShorthand{}, 0, bad
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n <= 0 {
		return v1.DurationShorthand{}, 0, bad
	}
	ds := v1.NewDurationShorthand(n, unit)
	d, ok := openSLODuration(ds)
	if !ok {
		return v1.DurationShorthand{}, 0, bad
	}
	return ds, d, nil
}
