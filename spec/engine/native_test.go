package engine

import "testing"

func TestAsNativeCountsObservationsWithHistogramCount(t *testing.T) {
	cat := load(t)
	tests := []struct {
		name, engine         string
		total, bad, requests string
	}{
		{"OTel errors and requests read the duration histogram's count", "otel",
			`histogram_count(gen_ai_server_request_duration_seconds)`,
			`histogram_count(gen_ai_server_request_duration_seconds{error_type!=""})`,
			`histogram_count(gen_ai_server_request_duration_seconds)`},
		{"UTF-8 names are matched by __name__", "otel-utf8",
			`histogram_count({__name__="gen_ai.server.request.duration_seconds"})`,
			`histogram_count({"error.type"!="",__name__="gen_ai.server.request.duration_seconds"})`,
			`histogram_count({__name__="gen_ai.server.request.duration_seconds"})`},
		{"counters that are not histogram counts stay as they are", "vllm",
			`sum(vllm:request_success_total) + sum(vllm:admission_rejections_total)`,
			`sum(vllm:request_success_total{finished_reason="error"}) + sum(vllm:admission_rejections_total)`,
			`vllm:request_success_total`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := cat.Engine(tt.engine)
			n, err := e.AsNative()
			if err != nil {
				t.Fatal(err)
			}
			if !n.IsNative() || e.IsNative() {
				t.Errorf("IsNative: copy %t, catalog entry %t; want true, false", n.IsNative(), e.IsNative())
			}
			if n.Errors.Total != tt.total || n.Errors.Bad != tt.bad || n.Requests != tt.requests {
				t.Errorf("got total %s, bad %s, requests %s\nwant total %s, bad %s, requests %s", n.Errors.Total, n.Errors.Bad, n.Requests, tt.total, tt.bad, tt.requests)
			}
		})
	}
}

func TestAnEngineDeclaredNativeIsReadAsItsDeclarationSays(t *testing.T) {
	e, err := ParseEngine("app", "histogramType: native\nhistograms:\n  ttft: {metric: h_seconds}\nerrors:\n  total: h_seconds_count\n  bad: 'h_seconds_count{outcome=\"error\"}'\n")
	if err != nil {
		t.Fatal(err)
	}
	native, err := e.As("")
	if err != nil {
		t.Fatal(err)
	}
	if !native.IsNative() || native.Errors.Bad != `histogram_count(h_seconds{outcome="error"})` {
		t.Errorf("default type: native %t, bad %s; want native with histogram_count", native.IsNative(), native.Errors.Bad)
	}
	classic, err := e.As(Classic)
	if err != nil {
		t.Fatal(err)
	}
	if classic.IsNative() || classic.Errors.Bad != `h_seconds_count{outcome="error"}` {
		t.Errorf("classic: native %t, bad %s; want classic with the _count series", classic.IsNative(), classic.Errors.Bad)
	}
}
