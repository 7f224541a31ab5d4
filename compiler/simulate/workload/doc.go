// Package workload synthesizes the series an SLO's rules read (counters
// and histograms shaped like its engine's, over several pods and a second
// model the rules must skip) and drives them into an in-memory Prometheus:
// the one burn policy every replay uses, where a Traffic's burn rate times
// the error budget is the share of bad requests (Driver), healthy history
// burns at HealthyBurn, and load is spread unevenly over pods. A Trunk is
// such a replay of healthy history run once and copied where the traffic
// of the replays sharing it departs.
package workload
