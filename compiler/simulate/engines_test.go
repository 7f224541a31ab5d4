package simulate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/spec"
)

// One spec per engine: the SLI queries name the engine's own series, with
// le in the histogram's own unit, and every alert behaves under simulation.
func TestEachEngineSpecSelectsTheEnginesSeriesAndPassesSimulation(t *testing.T) {
	tests := []struct {
		file string
		// simulate names the SLOs replayed through every scenario: those
		// whose shapes differ most (milliseconds, float buckets, UTF-8
		// names, summed counters). The others only have their synthetic
		// series checked, to keep the suite fast; `inferslo test
		// testdata/engines` replays them all.
		simulate []string
		// want are selectors that must appear among the SLI queries.
		want []string
	}{
		{"vllm.yaml", []string{}, []string{`vllm:time_to_first_token_seconds_bucket{le="0.5",model_name="llama-3-8b"}`, `vllm:request_queue_time_seconds_bucket{le="1.0",model_name="llama-3-8b"}`, `vllm:request_success_total{finished_reason="error",model_name="llama-3-8b"}`}},
		{"vllm-0.10.1.yaml", []string{}, []string{`vllm:time_per_output_token_seconds_bucket{le="0.05",model_name="llama-3-70b-instruct"}`, `http_requests_total{status="5xx"}`}},
		{"sglang.yaml", []string{}, []string{`sglang:time_to_first_token_seconds_bucket{le="0.4",model_name="mixtral-8x7b"}`, `sglang:queue_time_seconds_bucket{le="0.5",model_name="mixtral-8x7b"}`, `sglang:http_responses_total{status_code=~"5.."}`}},
		{"tgi.yaml", []string{"tgi-chat-e2e"}, []string{`tgi_request_duration_bucket{job="tgi",le="1.683411219602823"}`, `tgi_request_failure{job="tgi"}`, `tgi_request_count{job="tgi"}`}},
		{"triton.yaml", []string{"triton-chat-ttft"}, []string{`nv_inference_first_response_histogram_ms_bucket{le="500.0",model="ensemble"}`, `nv_inference_request_failure{model="ensemble",reason!="CANCELED"}`}},
		{"tensorrtllm-backend.yaml", []string{}, []string{`nv_inference_request_failure{model="tensorrt_llm",reason!="CANCELED"}`}},
		{"trtllm-serve.yaml", []string{}, []string{`trtllm_time_to_first_token_seconds_bucket{le="0.5",model_name="llama-3-8b"}`, `trtllm_request_error_total{model_name="llama-3-8b"}`}},
		{"dynamo.yaml", []string{}, []string{`dynamo_frontend_time_to_first_token_seconds_bucket{le="0.47",model="llama-3-8b"}`, `dynamo_frontend_requests_total{error_type!~"cancelled|validation|not_found",model="llama-3-8b",status="error"}`}},
		{"llama-cpp.yaml", []string{}, []string{`gateway_requests_total{code=~"5..",job="llama-server"}`}},
		{"litellm.yaml", []string{}, []string{`litellm_llm_api_time_to_first_token_metric_bucket{le="1.0",model="gpt-4o"}`, `litellm_proxy_failed_requests_metric_total{model="gpt-4o"}`}},
		{"otel.yaml", []string{}, []string{`gen_ai_server_time_to_first_token_seconds_bucket{gen_ai_request_model="llama-3-8b",le="0.25"}`, `gen_ai_server_request_duration_seconds_count{error_type!="",gen_ai_request_model="llama-3-8b"}`}},
		{"otel-nosuffix.yaml", []string{}, []string{`gen_ai_server_time_to_first_token_bucket{gen_ai_system="openai",le="0.25"}`}},
		{"otel-utf8.yaml", []string{"otel-utf8-ttft"}, []string{`{"gen_ai.request.model"="llama-3-8b",__name__="gen_ai.server.time_to_first_token_seconds_bucket",le="0.25"}`, `"error.type"!=""`}},
		{"otel-notranslation.yaml", []string{}, []string{`__name__="gen_ai.server.request.duration_bucket",le="0.64"`}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".yaml"), func(t *testing.T) {
			// A replay of one SLO runs on one core: the engines replay
			// side by side.
			t.Parallel()
			res, err := spec.Load(filepath.Join("../../testdata/engines", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if err := res.Err(); err != nil {
				t.Fatal(err)
			}
			var queries []string
			for _, s := range res.Set.SLOs {
				if s.SLI.Total != nil {
					queries = append(queries, s.SLI.Total.Expr)
				}
				if s.SLI.Good != nil {
					queries = append(queries, s.SLI.Good.Expr)
				}
				if s.SLI.Bad != nil {
					queries = append(queries, s.SLI.Bad.Expr)
				}
			}
			all := strings.Join(queries, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("no SLI query selects %s; queries:\n%s", w, all)
				}
			}
			var replay model.Set
			for _, s := range res.Set.SLOs {
				if _, err := synth.New(s, synth.Shape{Pods: 1, Models: 2}); err != nil {
					t.Errorf("SLO %s: %v", s.Name, err)
				}
				for _, n := range tt.simulate {
					if s.Name == n {
						replay.SLOs = append(replay.SLOs, s)
					}
				}
			}
			if len(replay.SLOs) != len(tt.simulate) {
				t.Fatalf("simulating %d of the SLOs %v", len(replay.SLOs), tt.simulate)
			}
			if testing.Short() || len(replay.SLOs) == 0 {
				return
			}
			// The engine's series are what this proves: no alert on healthy
			// traffic, the page during a fast burn, and the recorded ratio
			// equal to the counted one over a day. The other scenarios
			// prove the SLO kinds (with INFERSLO_LONG=1,
			// TestEveryExampleSLOPassesEveryScenario, and CI's `inferslo
			// test --strict examples`); INFERSLO_LONG=1 runs them here too.
			opts := Options{Shape: synth.Shape{Pods: 1, Models: 1}, Scenarios: []string{ScenarioHealthy, ScenarioFastBurn, ScenarioDayNight}}
			if os.Getenv("INFERSLO_LONG") != "" {
				opts.Scenarios = nil
			}
			r, err := Run(replay, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Error(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
