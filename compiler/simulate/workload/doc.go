// Package workload drives the synthetic series of package synth into an
// in-memory Prometheus: the one burn policy every replay uses, where a
// Traffic's burn rate times the error budget is the share of bad requests
// (Driver), healthy history burns at HealthyBurn, and load is spread
// unevenly over pods. A Trunk is such a replay of healthy history run once
// and copied where the traffic of the replays sharing it departs.
package workload
