// Package query holds the PromQL helpers every layer of inferslo shares:
// the parser with Prometheus' defaults, name and label validity, selectors,
// and builders that turn a spec's query into the rates and sums recording
// rules need. It imports nothing of inferslo, so the front end (spec) and
// every backend may use it.
package query

import (
	"fmt"

	prommodel "github.com/prometheus/common/model"
)

// MetricNameLabel is the label that holds a series' metric name.
const MetricNameLabel = prommodel.MetricNameLabel

// ValidMetricName reports whether name is a metric name PromQL accepts
// without quoting (the legacy character set), which is how generated rules
// and dashboards spell every name they can.
func ValidMetricName(name string) bool {
	return prommodel.LegacyValidation.IsValidMetricName(name)
}

// ValidLabelName reports whether name is a label name PromQL accepts
// without quoting.
func ValidLabelName(name string) bool {
	return prommodel.LegacyValidation.IsValidLabelName(name)
}

// MaxLabelBytes bounds a label name or value read from outside (a
// Prometheus answer, a scrape): Prometheus' labels cannot hold a string
// over 16 MiB and panic on one, and no real label comes near this bound.
const MaxLabelBytes = 1 << 20

// CheckLabelSize refuses a label whose name or value exceeds
// MaxLabelBytes, naming the label (its name cut short) and the size.
func CheckLabelSize(name, value string) error {
	if len(name) > MaxLabelBytes {
		return fmt.Errorf("a label name of %d bytes exceeds the limit of %d bytes", len(name), MaxLabelBytes)
	}
	if len(value) > MaxLabelBytes {
		short := name
		if len(short) > 64 {
			short = short[:64] + "..."
		}
		return fmt.Errorf("label %q: a value of %d bytes exceeds the limit of %d bytes", short, len(value), MaxLabelBytes)
	}
	return nil
}
