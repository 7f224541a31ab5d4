// Package realcode runs the real code of the systems that read inferslo's
// output on the compiled examples: Grafana's foundation SDK (strict
// unmarshal of every dashboard), Alertmanager's inhibitor (the generated
// inhibit rule), Thanos' rule checker (the ruler files) and dskit's tenant
// gate, as Mimir installs it, before a real Prometheus (backtest with
// --http-config). It is a module of
// its own so that their dependency graphs stay out of inferslo's; CI runs
// it from .ci/run. KEDA's scaler lives in ./keda for the same reason.
package realcode
