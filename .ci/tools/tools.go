//go:build tools

// Package tools pins the Prometheus server and promtool that CI builds to
// check generated rules, run promtool unit tests and the end-to-end test.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
