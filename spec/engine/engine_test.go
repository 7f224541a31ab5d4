package engine

import (
	"strconv"
	"strings"
	"testing"
)

func load(t *testing.T) *Catalog {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCatalogCoversEveryEngine(t *testing.T) {
	c := load(t)
	want := []string{"dynamo", "litellm", "llama-cpp", "ollama", "otel", "otel-nosuffix", "otel-notranslation", "otel-utf8", "sglang", "tensorrtllm-backend", "tgi", "triton", "trtllm-serve", "vllm"}
	if got := strings.Join(c.IDs(), ","); got != strings.Join(want, ",") {
		t.Fatalf("engines = %s, want %s", got, strings.Join(want, ","))
	}
	for _, id := range c.IDs() {
		e := c.Engines[id]
		for _, sli := range append(append([]string{}, Roles...), "errors") {
			if e.Missing(sli) == "" {
				continue
			}
			// Every SLI an engine lacks is explained by a written fact, not
			// the generic fallback.
			_, lack := e.Lacks[sli]
			_, mean := e.Means[sli]
			if !lack && !mean && sli != "errors" {
				t.Errorf("%s lacks %s without saying what it has instead", id, sli)
			}
			if sli == "errors" && e.Errors.Gateway == "" {
				t.Errorf("%s counts no failures and does not say where the errors SLI comes from", id)
			}
		}
	}
}

func TestResolvePicksTheVersionVariant(t *testing.T) {
	c := load(t)
	tests := []struct {
		name, engine, version string
		check                 func(e *Engine) string
	}{
		{"vLLM 0.10.1 measures ITL with time_per_output_token", "vllm", "0.10.1", func(e *Engine) string {
			return e.Histograms["itl"].Metric
		}},
		{"vLLM 0.10.2 has inter_token_latency", "vllm", "0.10.2", func(e *Engine) string { return e.Histograms["itl"].Metric }},
		{"vLLM 0.9.1 names the KV gauge gpu_cache_usage_perc", "vllm", "v0.9.1", func(e *Engine) string { return e.Gauges["kv_cache_usage"] }},
		{"vLLM 0.9.2 names the KV gauge kv_cache_usage_perc", "vllm", "0.9.2", func(e *Engine) string { return e.Gauges["kv_cache_usage"] }},
		{"vLLM 0.8.3 has the old TTFT buckets ending at 10 s", "vllm", "0.8.3", func(e *Engine) string {
			b := e.Histograms["ttft"].Buckets
			return strconv.FormatFloat(b[len(b)-1], 'f', -1, 64)
		}},
		{"vLLM 0.10 has no per-request TPOT", "vllm", "0.10.0", func(e *Engine) string { return strings.Join(e.Roles(), ",") }},
		{"vLLM 0.12 has no error reason but tells cut-short answers apart", "vllm", "0.12.0", func(e *Engine) string { return strings.Join(e.SLIs(), ",") }},
		{"vLLM 0.31 counts no admission rejections", "vllm", "0.31.0", func(e *Engine) string { return e.Missing("rejections") }},
		{"vLLM 0.32 counts every failure kind it has", "vllm", "0.32.0", func(e *Engine) string { return strings.Join(e.SLIs(), ",") }},
		{"Triton r24.05 cannot tell rejections from other failures", "triton", "r24.05", func(e *Engine) string { return strings.Join(e.SLIs(), ",") }},
		{"SGLang 0.5.2 names the queue histogram queue_time_s", "sglang", "0.5.2", func(e *Engine) string { return e.Histograms["queue"].Metric }},
		{"SGLang 0.5.1 e2e buckets end at 800", "sglang", "0.5.1", func(e *Engine) string {
			b := e.Histograms["e2e"].Buckets
			return strconv.FormatFloat(b[len(b)-1], 'f', -1, 64) + " " + strings.Join(e.Roles(), ",")
		}},
		{"SGLang 0.4.4 has a TPOT histogram", "sglang", "0.4.4", func(e *Engine) string { return e.Histograms["tpot"].Metric }},
		{"Triton r24.05 counts cancellations as failures", "triton", "r24.05", func(e *Engine) string { return e.Errors.Bad }},
		{"OTel before 1.37 labels the provider gen_ai_system", "otel", "1.36.0", func(e *Engine) string { return e.Labels[1] }},
	}
	want := []string{
		"vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds",
		"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc", "10",
		"ttft,itl,e2e,queue", "ttft,itl,tpot,e2e,queue,incomplete",
		"vllm:admission_rejections_total appears in 0.32; before it requests refused at admission (HTTP 503) reach no engine counter, so take rejections from a gateway (total and bad on the objective)",
		"ttft,itl,tpot,e2e,queue,errors,incomplete,rejections", "errors",
		"sglang:queue_time_s", "800 ttft,itl,e2e", "sglang:time_per_output_token_seconds",
		"nv_inference_request_failure", "gen_ai_system",
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := c.Resolve(tt.engine, tt.version)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.check(e); got != want[i] {
				t.Errorf("got %q, want %q", got, want[i])
			}
		})
	}
	if c.Engines["vllm"].Histograms["itl"].Metric != "vllm:inter_token_latency_seconds" {
		t.Error("resolving a variant changed the catalog's own entry")
	}
}

func TestResolveRefusesVersionsOutsideTheCatalog(t *testing.T) {
	c := load(t)
	for _, tc := range []struct{ engine, version, want string }{
		{"vllm", "0.6.0", "from 0.7.3"},
		{"vllm", "latest", "not a version"},
		{"tgi", "3.0.0", "no version variants"},
		{"nope", "", "unknown engine"},
	} {
		_, err := c.Resolve(tc.engine, tc.version)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%s, %s) = %v, want an error with %q", tc.engine, tc.version, err, tc.want)
		}
	}
}

func TestTritonBucketsAreMilliseconds(t *testing.T) {
	h := load(t).Engines["triton"].Histograms["ttft"]
	le, ok := h.Bucket(0.5)
	if !ok || le != 500 {
		t.Fatalf("Bucket(0.5 s) = %v, %v; want le 500", le, ok)
	}
	below, above := h.Neighbours(1)
	if below != 0.5 || above != 2 {
		t.Errorf("Neighbours(1 s) = %v, %v; want 0.5 and 2 seconds", below, above)
	}
	if _, ok := h.Bucket(100); ok {
		t.Error("100 s matched the 100 ms bucket")
	}
}

func TestMissingSLIsSayWhatTheEngineHas(t *testing.T) {
	c := load(t)
	for _, tc := range []struct{ engine, sli, want string }{
		{"tgi", "ttft", "tgi_request_queue_duration"},
		{"llama-cpp", "itl", "means only"},
		{"sglang", "errors", "to count cancellations as errors"},
		{"ollama", "e2e", "no metrics"},
		{"tensorrtllm-backend", "ttft", "nv_inference_first_response_histogram_ms"},
		{"dynamo", "queue", "dynamo_frontend_queued_requests"},
	} {
		if got := c.Engines[tc.engine].Missing(tc.sli); !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: %q does not mention %q", tc.engine, tc.sli, got, tc.want)
		}
	}
	if got := c.Engines["vllm"].Missing("ttft"); got != "" {
		t.Errorf("vLLM has TTFT, yet Missing says %q", got)
	}
}

func TestMetricResolvesSeriesAcrossEnginesAndVersions(t *testing.T) {
	c := load(t)
	tests := []struct {
		name, series, family, suffix, kind, engine, role string
	}{
		{"a histogram's bucket series", "vllm:time_to_first_token_seconds_bucket", "vllm:time_to_first_token_seconds", "_bucket", KindHistogram, "vllm", "ttft"},
		{"a counter without _total", "tgi_request_failure", "tgi_request_failure", "", KindCounter, "tgi", "errors"},
		{"a metric of an old release only", "vllm:time_per_output_token_seconds_count", "vllm:time_per_output_token_seconds", "_count", KindHistogram, "vllm", "itl"},
		{"a gauge of an old release", "vllm:gpu_cache_usage_perc", "vllm:gpu_cache_usage_perc", "", KindGauge, "vllm", "kv_cache_usage"},
		{"a UTF-8 name", "gen_ai.server.time_to_first_token_seconds_sum", "gen_ai.server.time_to_first_token_seconds", "_sum", KindHistogram, "otel-utf8", "ttft"},
		{"a gauge behind a label matcher", "nv_trt_llm_request_metrics", "nv_trt_llm_request_metrics", "", KindGauge, "tensorrtllm-backend", "queue_depth"},
		{"a token-count histogram no SLI reads", "vllm:request_prompt_tokens_bucket", "vllm:request_prompt_tokens", "_bucket", KindHistogram, "vllm", "prompt_tokens"},
		{"a request-phase histogram", "vllm:request_decode_time_seconds_sum", "vllm:request_decode_time_seconds", "_sum", KindHistogram, "vllm", "decode_time"},
		{"the admission-rejection counter", "vllm:admission_rejections_total", "vllm:admission_rejections_total", "", KindCounter, "vllm", "admission_rejections"},
		{"an SGLang throughput gauge", "sglang:gen_throughput", "sglang:gen_throughput", "", KindGauge, "sglang", "gen_throughput"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := c.Metric(tt.series)
			if !ok {
				t.Fatalf("%s not found", tt.series)
			}
			if m.Family != tt.family || m.Suffix != tt.suffix || m.Kind != tt.kind {
				t.Errorf("got family %q suffix %q kind %q", m.Family, m.Suffix, m.Kind)
			}
			if m.Uses[0].Engine != tt.engine || m.Uses[0].Role != tt.role {
				t.Errorf("first use %+v, want engine %s role %s", m.Uses[0], tt.engine, tt.role)
			}
		})
	}
	m, ok := c.Metric("vllm:gpu_cache_usage_perc")
	if !ok || len(m.Changes) != 1 || m.Changes[0].ReplacedBy != "vllm:kv_cache_usage_perc" || m.Changes[0].Removed != "0.12" {
		t.Errorf("gpu_cache_usage_perc changes = %+v", m.Changes)
	}
	if m.Uses[0].Versions != "before 0.9.2" {
		t.Errorf("gpu_cache_usage_perc versions = %q", m.Uses[0].Versions)
	}
	changes := []struct{ series, replacedBy, since, removed string }{
		{"vllm:gpu_prefix_cache_hits_total", "vllm:prefix_cache_hits_total", "0.9.2", "0.12"},
		{"vllm:num_requests_swapped", "", "", "0.9.1"},
		{"vllm:cpu_cache_usage_perc", "", "", "0.9.1"},
	}
	for _, tt := range changes {
		m, ok := c.Metric(tt.series)
		if !ok || len(m.Uses) != 0 || len(m.Changes) != 1 {
			t.Errorf("%s: known %t, uses %+v, changes %+v; want one change and no use", tt.series, ok, m.Uses, m.Changes)
			continue
		}
		if ch := m.Changes[0]; ch.Engine != "vllm" || ch.ReplacedBy != tt.replacedBy || ch.Since != tt.since || ch.Removed != tt.removed {
			t.Errorf("%s: change %+v", tt.series, ch)
		}
	}
	if _, ok := c.Metric("vllm:not_a_metric"); ok {
		t.Error("an unknown name was found")
	}
	tr, _ := c.Metric("nv_inference_first_response_histogram_ms_bucket")
	if tr.Uses[0].Unit != Milliseconds {
		t.Errorf("Triton TTFT unit = %q", tr.Uses[0].Unit)
	}
}

func TestParseRejectsBrokenCatalogs(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"descending buckets", "engines: {x: {title: X, histograms: {ttft: {metric: m, buckets: [2, 1]}}}}", "ascending"},
		{"unknown role", "engines: {x: {title: X, histograms: {speed: {metric: m, buckets: [1]}}}}", "not one of"},
		{"unknown unit", "engines: {x: {title: X, histograms: {ttft: {metric: m, unit: hours, buckets: [1]}}}}", "not seconds or milliseconds"},
		{"unknown field", "engines: {x: {title: X, colour: red}}", "colour"},
		{"bad id", "engines: {X_1: {title: X}}", "engine id"},
	} {
		_, err := Parse([]byte(tc.yaml), "my.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "my.yaml") {
			t.Errorf("%s: error %v, want one naming my.yaml and %q", tc.name, err, tc.want)
		}
	}
}

func TestVersionsCompareAsNumbers(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"0.10.1", "0.9.2", 1}, {"v0.9.2", "0.9.2", 0}, {"0.3.5.post1", "0.3.5", 0}, {"r24.07", "24.6", 1}, {"1.37", "1.36.0", 1}} {
		a, err1 := parseVersion(tc.a)
		b, err2 := parseVersion(tc.b)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := compareVersions(a, b); got != tc.want {
			t.Errorf("compare(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
