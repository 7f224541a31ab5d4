// Package prom is an in-memory Prometheus for replays in simulated time: a
// TSDB head, Prometheus' own PromQL engine and rules manager loading rule
// groups parsed once (Harness), an evaluation schedule that runs each
// recording rule only at the steps its readers need (Schedule), the
// backtest's Replay of rule files over history written into it, rule files
// read from a folder, and readings of its alerts. It knows nothing of
// synthetic workloads or of what a replay must prove.
package prom
