//go:build tools

// Package tools pins the VictoriaMetrics single-node server and vmalert
// that CI builds: vmalert -dryRun checks the rule groups `compile --ruler
// vmalert` writes, and backtest reads history from VictoriaMetrics.
package tools

import (
	_ "github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics"
	_ "github.com/VictoriaMetrics/VictoriaMetrics/app/vmalert"
)
