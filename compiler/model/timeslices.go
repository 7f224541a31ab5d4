package model

import "time"

// Budgeting methods of OpenSLO that inferslo tells apart (the third is
// Timeslices).
const (
	Occurrences     = "Occurrences"
	RatioTimeslices = "RatioTimeslices"
)

// Timeslices makes an SLO budget time slices instead of events: the SLO
// window is cut into slices of Window, each slice gets one SLI value, and
// the error ratio of any longer window is the average of its slices'
// errors. Slices without traffic have no SLI and are left out.
type Timeslices struct {
	// Window is the slice length; rules evaluate once per slice, so each
	// recorded sample is one slice.
	Window time.Duration
	// Target is the share of good events a slice of a ratio SLI needs to
	// be good, or for a threshold SLI the share of the slice's evaluations
	// whose value meets the threshold (OpenSLO timeSliceTarget). Zero when
	// Average is set, and for a threshold SLI read once per slice
	// (timeSliceTarget 1), whose slice is good when its value meets the
	// threshold.
	Target Decimal
	// Evaluation is how often a threshold SLI with a Target is evaluated
	// within a slice (the slice holds Window/Evaluation evaluations); zero
	// otherwise.
	Evaluation time.Duration
	// Average is RatioTimeslices: a slice's error is its own bad/total
	// ratio, not 0 or 1, so the SLO is the average of slice ratios.
	Average bool
}

// Threshold is an SLI whose query yields one value per slice (a latency
// percentile, say); the slice is good when the value meets Op Value.
type Threshold struct {
	// Query reads the slice: every range in it is the slice window, or
	// Range when the slice has several evaluations.
	Query Query
	// Range is the one range of the query's rates; Quantile its φ.
	Range    time.Duration
	Quantile float64
	// Op is the PromQL comparison a good value satisfies: <=, <, >= or >.
	Op    string
	Value Decimal
}

// TimeAveraged tells whether the SLO's longer windows average the base
// window's error ratio over time (raw ratios and time slices) rather than
// divide event counts.
func (s SLO) TimeAveraged() bool { return s.SLI.Raw != nil || s.Timeslices != nil }
