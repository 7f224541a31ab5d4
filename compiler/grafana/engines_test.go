package grafana

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/templates"
)

// Each engine's dashboard reads the engine's own series, in its own unit,
// and leaves out the panels of signals the engine lacks.
func TestEngineDashboardsUseTheEnginesOwnSeries(t *testing.T) {
	tests := []struct {
		name, file, service string
		// latency is the unit of the TTFT panel ("" when there is none).
		latency string
		// want are expressions the dashboard must query; absent are
		// panel titles it must not have.
		want, absent []string
	}{
		{"Triton draws TTFT in milliseconds", "triton.yaml", "triton-chat", "ms",
			[]string{`nv_inference_first_response_histogram_ms_bucket{model="ensemble"`, `sum(nv_inference_pending_request_count{model="ensemble"`},
			[]string{"KV cache usage"}},
		{"TGI has no TTFT panel and counters without _total", "tgi.yaml", "tgi-chat", "",
			[]string{`tgi_request_duration_bucket{job="tgi"`, `sum(tgi_queue_size{job="tgi"`},
			[]string{"Time to first token (p50, p95, p99)", "KV cache usage"}},
		{"the TensorRT-LLM backend's gauges carry their own matchers", "tensorrtllm-backend.yaml", "trtllm-backend", "",
			[]string{`model="tensorrt_llm",model=~"$model",request_type="waiting"}`, `max by (instance) (nv_trt_llm_kv_cache_block_metrics{instance=~"$instance",kv_cache_block_type="fraction",model="tensorrt_llm"`},
			nil},
		{"UTF-8 OpenTelemetry names are quoted", "otel-utf8.yaml", "otel-utf8", "s",
			[]string{`{"gen_ai.server.time_to_first_token_seconds_bucket","gen_ai.request.model"="llama-3-8b"`},
			nil},
		{"llama.cpp shows its gauges and token counters", "llama-cpp.yaml", "edge", "",
			[]string{`llamacpp:requests_deferred{job="llama-server"`, `llamacpp:tokens_predicted_total{job="llama-server"`},
			[]string{"KV cache usage"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := spec.Load(filepath.Join("../../testdata/engines", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if err := res.Err(); err != nil {
				t.Fatal(err)
			}
			text, err := templates.Load("")
			if err != nil {
				t.Fatal(err)
			}
			d, err := serviceDashboard(tt.service, res.Set.SLOs, &words{text: text, service: tt.service}, newQueries())
			if err != nil {
				t.Fatal(err)
			}
			var exprs []string
			titles := map[string]bool{}
			ttftUnit := ""
			for _, item := range d.Panels {
				p, ok := item.(panel)
				if !ok {
					continue
				}
				titles[p.Title] = true
				if p.Title == "Time to first token (p50, p95, p99)" {
					ttftUnit = p.FieldConfig.Defaults.Unit
				}
				for _, tg := range p.Targets {
					exprs = append(exprs, tg.Expr)
				}
			}
			all := strings.Join(exprs, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("no query contains %s; queries:\n%s", w, all)
				}
			}
			for _, a := range tt.absent {
				if titles[a] {
					t.Errorf("panel %q drawn for an engine without it", a)
				}
			}
			if ttftUnit != tt.latency {
				t.Errorf("TTFT panel unit %q, want %q", ttftUnit, tt.latency)
			}
		})
	}
}
