package prom

import (
	"testing"
	"time"
)

func TestProjectionScalesEachQueryToItsFullRange(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		samples int64
		at      time.Duration
		want    int64
	}{
		{"a 28d range selector read over 1h of history reads 672 times more", `avg_over_time(x[4w])`, 60, 0, 40320},
		{"a range within the history is counted as read", `rate(x[5m])`, 10, 0, 10},
		{"an hourly subquery that found two steps of data reads 672 steps in 28d", `sum_over_time(x[4w:1h])`, 2, 30 * time.Minute, 672},
		{"the same subquery on the hour found three steps", `sum_over_time(x[4w:1h])`, 3, time.Hour, 672},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := QueryCount{History: time.Hour}
			c.add(tt.query, tt.samples, Epoch().Add(tt.at))
			if c.Projected != tt.want || c.Samples != tt.samples {
				t.Errorf("projected %d (counted %d), want %d", c.Projected, c.Samples, tt.want)
			}
		})
	}
}
