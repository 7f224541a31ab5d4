package model

import (
	"strconv"
	"time"

	prommodel "github.com/prometheus/common/model"
)

// FormatDuration prints a duration the way PromQL and rule files write it
// ("4m40s", "2d19h12m"), exactly, with no rounding: as Prometheus'
// model.Duration prints it (a test holds the two equal), in one allocation
// instead of one per unit, since every rule and panel prints several.
func FormatDuration(d time.Duration) string {
	ms := d.Milliseconds()
	if ms == 0 {
		return "0s"
	}
	var b [32]byte
	out := b[:0]
	if ms < 0 {
		out, ms = append(out, '-'), -ms
	}
	units := [...]struct {
		name  string
		mult  int64
		exact bool
	}{
		// Years and weeks only when nothing is left over: 90d, not 12w6d.
		{"y", 365 * 24 * 3600 * 1000, true},
		{"w", 7 * 24 * 3600 * 1000, true},
		{"d", 24 * 3600 * 1000, false},
		{"h", 3600 * 1000, false},
		{"m", 60 * 1000, false},
		{"s", 1000, false},
		{"ms", 1, false},
	}
	for _, u := range units {
		if u.exact && ms%u.mult != 0 {
			continue
		}
		if v := ms / u.mult; v > 0 {
			out = strconv.AppendInt(out, v, 10)
			out = append(out, u.name...)
			ms -= v * u.mult
		}
	}
	return string(out)
}

// ParseDuration reads a Prometheus duration ("5m", "1h30m", "28d").
func ParseDuration(s string) (time.Duration, error) {
	d, err := prommodel.ParseDuration(s)
	return time.Duration(d), err
}
