// Package timeline replays the review page's scenario (a healthy day, a
// fast burn, the recovery) for each service through an in-memory
// Prometheus and returns every query's result over the replay and the
// intervals its alerts fired: the timeline the review page draws.
package timeline
