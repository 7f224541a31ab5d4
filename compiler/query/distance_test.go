package query

import "testing"

func TestEditDistanceCountsRuneEdits(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{"equal names are no edit apart", "vllm:num_requests_running", "vllm:num_requests_running", 0},
		{"one missing letter is one edit", "targt", "target", 1},
		{"swapped letters are two edits", "tagret", "target", 2},
		{"an empty name is as far as the other is long", "", "window", 6},
		{"a multi-byte letter is one edit, not two", "latenz_µs", "latenz_us", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EditDistance(tt.a, tt.b); got != tt.want {
				t.Errorf("EditDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
