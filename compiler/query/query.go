// Package query holds the PromQL helpers every layer of inferslo shares:
// the parser with Prometheus' defaults, name and label validity, selectors,
// and builders that turn a spec's query into the rates and sums recording
// rules need. It imports nothing of inferslo, so the front end (spec) and
// every backend may use it.
package query

import (
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
