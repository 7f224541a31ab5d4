package query

import (
	"testing"
	"time"
)

func TestExcludingLeavesOutTheSeriesOfAnotherSelector(t *testing.T) {
	tests := []struct {
		name, query, other, want string
		ok                       bool
	}{
		{"a bare counter loses the other's reason", "tgi_request_failure", `tgi_request_failure{err="overloaded"}`, `tgi_request_failure{err!="overloaded"}`, true},
		{"a negated reason gains a second one", `nv_inference_request_failure{reason!="CANCELED"}`, `nv_inference_request_failure{reason="REJECTED"}`, `nv_inference_request_failure{reason!="CANCELED",reason!="REJECTED"}`, true},
		{"another metric is left alone", `vllm:request_success_total{finished_reason="error"}`, "vllm:admission_rejections_total", `vllm:request_success_total{finished_reason="error"}`, false},
		{"a whole metric's term leaves the sum", `sum(vllm:request_success_total{finished_reason="error"}) + sum(vllm:admission_rejections_total)`, "vllm:admission_rejections_total", `sum(vllm:request_success_total{finished_reason="error"})`, true},
		{"a whole metric's grouped term leaves a longer sum", `sum by (m) (a_total) + sum by (m) (r_total{x="1"}) + sum by (m) (b_total)`, "r_total", `sum by (m) (a_total) + sum by (m) (b_total)`, true},
		{"a sum of only the metric is kept", `sum(r_total) + sum(r_total{x="1"})`, "r_total", `sum(r_total) + sum(r_total{x="1"})`, false},
		{"a term mixing the metric with another is kept", `sum(a_total) + (sum(r_total) / sum(b_total))`, "r_total", `sum(a_total) + (sum(r_total) / sum(b_total))`, false},
		{"two matchers cannot be negated one by one", "tgi_request_failure", `tgi_request_failure{err="overloaded",shard="0"}`, "tgi_request_failure", false},
		{"a query that does not parse is kept", "sum(", `x{a="b"}`, "sum(", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Excluding(tt.query, tt.other)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Excluding(%q, %q) = %q, %v; want %q, %v", tt.query, tt.other, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCheckRateRefusesWhatRateOfRefuses(t *testing.T) {
	for _, q := range []string{
		`sum(rate(x[5m]))`,
		`x{a="b"} + y`,
		`x[5m]`,
		`x * y`,
		`histogram_count(h) * histogram_fraction(0, 0.5, h)`,
		`sum(x) - 1`,
	} {
		t.Run(q, func(t *testing.T) {
			expr, err := NewParser().ParseExpr(q)
			if err != nil {
				t.Fatal(err)
			}
			_, want := RateOf(q, 5*time.Minute)
			got := CheckRate(q, expr)
			if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
				t.Errorf("CheckRate() = %v, RateOf() refused with %v", got, want)
			}
		})
	}
}
