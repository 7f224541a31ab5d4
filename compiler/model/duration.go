package model

import (
	"time"

	prommodel "github.com/prometheus/common/model"
)

// FormatDuration prints a duration the way PromQL and rule files write it
// ("4m40s", "2d19h12m"), exactly, with no rounding.
func FormatDuration(d time.Duration) string {
	return prommodel.Duration(d).String()
}

// ParseDuration reads a Prometheus duration ("5m", "1h30m", "28d").
func ParseDuration(s string) (time.Duration, error) {
	d, err := prommodel.ParseDuration(s)
	return time.Duration(d), err
}
