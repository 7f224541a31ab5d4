package synth

import (
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

func TestEngineSeriesCarryTheEnginesNamesAndLeStrings(t *testing.T) {
	w, err := New(slotest.VLLM(t, "ttft", "99%"), Shape{Pods: 3, Models: 2})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	pods := map[string]bool{}
	for _, s := range w.Series {
		have[s.Labels.Get(query.MetricNameLabel)+" le="+s.Labels.Get("le")+" model="+s.Labels.Get("model_name")] = true
		pods[s.Labels.Get("pod")] = true
	}
	for _, want := range []string{
		"vllm:time_to_first_token_seconds_bucket le=1.0 model=llama-3-70b",
		"vllm:time_to_first_token_seconds_bucket le=2560.0 model=llama-3-70b",
		"vllm:time_to_first_token_seconds_bucket le=0.001 model=llama-3-70b",
		"vllm:time_to_first_token_seconds_bucket le=+Inf model=llama-3-70b",
		"vllm:time_to_first_token_seconds_count le= model=llama-3-70b",
		"vllm:time_to_first_token_seconds_sum le= model=llama-3-70b",
		"vllm:request_success_total le= model=llama-3-70b",
		"vllm:time_to_first_token_seconds_count le= model=llama-3-70b-other-1",
	} {
		if !have[want] {
			t.Errorf("no series %s", want)
		}
	}
	if len(pods) != 3 {
		t.Errorf("series of %d pods, want 3", len(pods))
	}
}

func TestSynthesizedSeriesDriveTheSLIExactly(t *testing.T) {
	otel := slotest.VLLM(t, "errors", "99.9%")
	otel.Inference.Engine = "otel"
	otel.Inference.Selector = `gen_ai_request_model="m"`
	otel.SLI.Total.Expr = `gen_ai_server_request_duration_seconds_count{gen_ai_request_model="m"}`
	otel.SLI.Bad.Expr = `gen_ai_server_request_duration_seconds_count{error_type!="",gen_ai_request_model="m"}`
	goodRatio := slotest.Gateway(t)
	goodRatio.SLI.Bad = nil
	goodRatio.SLI.Good = &model.Query{Expr: `sum(http_requests_total{code!~"5..",job="gateway"})`}
	offBoundary := nativeSLO(t, "otel-assistant-ttft")
	offBoundary.Inference.Threshold = model.NewDecimal(3, 10)
	offBoundary.SLI.Good = &model.Query{Expr: strings.ReplaceAll(offBoundary.SLI.Good.Expr, "0, 0.5,", "0, 0.3,")}
	tests := []struct {
		name string
		slo  model.SLO
	}{
		{"a vLLM TTFT SLI counts slow requests in the histogram", slotest.VLLM(t, "ttft", "99%")},
		{"a vLLM errors SLI counts finished_reason=error", slotest.VLLM(t, "errors", "99.9%")},
		{"a plain ratio with a regex bad selector gets a 5xx series", slotest.Gateway(t)},
		{"a plain ratio with a negative good selector gets a failing series", goodRatio},
		{"an engine whose errors are a histogram label falls back to the selectors", otel},
		{"a native TTFT histogram holds good and slow observations either side of the threshold", nativeSLO(t, "otel-assistant-ttft")},
		{"native errors count the observations of failed requests' histogram", nativeSLO(t, "otel-assistant-errors")},
		{"a native threshold off the boundaries still splits good from slow observations", offBoundary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := New(tt.slo, Shape{Pods: 2, Models: 1})
			if err != nil {
				t.Fatal(err)
			}
			// 1000 requests, 37 bad, on pod 0 only.
			var inputs []Input
			for _, s := range w.Series {
				if s.Pod == 0 {
					c := Counter{Labels: s.Labels, PerRequest: s.CoefN, PerBad: s.coefK, native: s.hist, schema: s.schema}
					inputs = append(inputs, Input{Counter: c, N: 1000, K: 37})
				}
			}
			total, bad, err := Events(tt.slo, inputs)
			if err != nil {
				t.Fatal(err)
			}
			if total != 1000 || bad != 37 {
				t.Errorf("the SLI counts %g events, %g bad; want 1000 and 37", total, bad)
			}
		})
	}
}

func TestRegexLabelValuesMatchTheirSelectors(t *testing.T) {
	for _, re := range []string{"5..", "5xx|error", "llama-3-.*", "(a|b)[0-9]+", "gpu-[a-f]{2}"} {
		v, err := exampleOf(re)
		if err != nil {
			t.Errorf("%s: %v", re, err)
			continue
		}
		m := labels.MustNewMatcher(labels.MatchRegexp, "x", re)
		if !m.Matches(v) {
			t.Errorf("%q does not match %s", v, re)
		}
	}
}

// nativeSLO is an SLO of the OpenTelemetry example on native histograms.
func nativeSLO(t *testing.T, name string) model.SLO {
	t.Helper()
	res, err := spec.Load("../../../examples/otel-native.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Set.SLOs {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no SLO %s in the example", name)
	return model.SLO{}
}
