package autoscale

import "math"

// scrapeQuantile is quantile q of the observations one scrape added to a
// cumulative histogram (bounds ascending, +Inf last), interpolated within
// its bucket as histogram_quantile does; the highest finite bound when it
// falls in +Inf, NaN without observations.
func scrapeQuantile(q float64, bounds, before, after []float64) float64 {
	n := len(bounds)
	if n == 0 || after[n-1]-before[n-1] <= 0 {
		return math.NaN()
	}
	rank := q * (after[n-1] - before[n-1])
	lower, below := 0.0, 0.0
	for i, b := range bounds {
		c := after[i] - before[i]
		if c >= rank {
			if math.IsInf(b, 1) {
				return lower
			}
			if c == below {
				return b
			}
			return lower + (b-lower)*(rank-below)/(c-below)
		}
		lower, below = b, c
	}
	return lower
}
