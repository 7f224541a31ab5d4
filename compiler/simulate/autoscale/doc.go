// Package autoscale puts the generated autoscaler in the loop: engine
// fleets queueing under a load, scraped into an in-memory Prometheus with
// the generated rules, their KEDA triggers queried and turned into
// replicas by the HPA's algorithm.
package autoscale
