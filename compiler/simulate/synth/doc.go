// Package synth synthesizes the series an SLO's rules read: counters and
// histograms shaped like its engine's, over several pods and a second model
// the rules must skip, each a linear form in a pod's requests n and bad
// requests k, checked so that the SLI over them is exactly k/n. It is pure
// arithmetic over labels: the generated promtool tests (a backend of
// compile) read it without linking Prometheus' storage, and package
// workload drives it into the in-memory Prometheus.
package synth
