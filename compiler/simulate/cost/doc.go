// Package cost measures what the generated rules cost Prometheus' engine
// (queries, samples read, evaluation time, projected to the full windows)
// against a naive baseline computing every window from raw series, in an
// in-memory Prometheus over a synthetic workload.
package cost
