package grafana

import (
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

func dec(t testing.TB, s string) model.Decimal {
	t.Helper()
	d, err := model.ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// workbookTiers are the multi-window, multi-burn-rate tiers of the SRE
// workbook for a 28-day window.
func workbookTiers(t testing.TB) []model.Tier {
	return []model.Tier{
		{Severity: "page", For: 2 * time.Minute, Windows: []model.WindowPair{
			{Long: time.Hour, Short: 5 * time.Minute, Factor: dec(t, "14.4")},
			{Long: 6 * time.Hour, Short: 30 * time.Minute, Factor: dec(t, "6")},
		}},
		{Severity: "ticket", For: time.Hour, Windows: []model.WindowPair{
			{Long: 24 * time.Hour, Short: 2 * time.Hour, Factor: dec(t, "3")},
			{Long: 72 * time.Hour, Short: 6 * time.Hour, Factor: dec(t, "1")},
		}},
	}
}

// vllmBuckets holds the vLLM V1 histogram bounds (engines research §1.2).
func vllmBuckets() map[string][]float64 {
	itl := []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	return map[string][]float64{
		"vllm:time_to_first_token_seconds":           {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0},
		"vllm:inter_token_latency_seconds":           itl,
		"vllm:request_time_per_output_token_seconds": itl,
		"vllm:e2e_request_latency_seconds":           {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0},
	}
}

func vllmSignals() model.Signals {
	return model.Signals{
		QueueDepth:       "vllm:num_requests_waiting",
		Running:          "vllm:num_requests_running",
		KVCacheUsage:     "vllm:kv_cache_usage_perc",
		Requests:         "vllm:request_success_total",
		PromptTokens:     "vllm:prompt_tokens_total",
		GenerationTokens: "vllm:generation_tokens_total",
		TTFT:             "vllm:time_to_first_token_seconds",
		ITL:              "vllm:inter_token_latency_seconds",
		TPOT:             "vllm:request_time_per_output_token_seconds",
		E2E:              "vllm:e2e_request_latency_seconds",
		Buckets:          vllmBuckets(),
	}
}

const chatSelector = `model_name="llama-3-70b"`

// vllmSLO is one objective of the chat service, shaped the way the inference
// shorthand resolves it for vLLM.
func vllmSLO(t testing.TB, role, threshold, target string) model.SLO {
	histograms := map[string]string{
		"ttft": "vllm:time_to_first_token_seconds",
		"itl":  "vllm:inter_token_latency_seconds",
		"tpot": "vllm:request_time_per_output_token_seconds",
	}
	slo := model.SLO{
		Name:           "chat-" + role,
		DisplayName:    "Chat " + role,
		Service:        model.Service{Name: "chat", DisplayName: "Chat assistant", Description: "Streaming chat on Llama 3 70B."},
		Source:         "examples/chat.yaml",
		Objective:      dec(t, target),
		Window:         28 * 24 * time.Hour,
		Budgeting:      "Occurrences",
		Alerting:       model.Alerting{Tiers: workbookTiers(t), NoData: true},
		Evaluation:     30 * time.Second,
		ScrapeInterval: 15 * time.Second,
		Inference: &model.Inference{
			Engine:          "vllm",
			EngineTitle:     "vLLM",
			Role:            role,
			Selector:        chatSelector,
			SelectorLabels:  []string{"model_name"},
			TTFTDenominator: "histogram",
			Signals:         vllmSignals(),
		},
	}
	if h, ok := histograms[role]; ok {
		le := threshold
		slo.Inference.Threshold = dec(t, threshold)
		slo.Inference.Histogram = h
		slo.Inference.Buckets = vllmBuckets()[h]
		slo.SLI = model.SLI{
			Counter: true,
			Total:   &model.Query{Expr: h + `_count{` + chatSelector + `}`},
			Good:    &model.Query{Expr: h + `_bucket{` + chatSelector + `,le="` + le + `"}`},
		}
	} else {
		slo.SLI = model.SLI{
			Counter: true,
			Total:   &model.Query{Expr: `vllm:request_success_total{` + chatSelector + `}`},
			Bad:     &model.Query{Expr: `vllm:request_success_total{` + chatSelector + `,finished_reason="error"}`},
		}
	}
	return slo
}

// checkoutSLO is a plain OpenSLO ratio SLI with no engine facts.
func checkoutSLO(t testing.TB) model.SLO {
	return model.SLO{
		Name:           "checkout-availability",
		Service:        model.Service{Name: "checkout"},
		Source:         "examples/checkout.yaml",
		Objective:      dec(t, "99.5%"),
		Window:         7 * 24 * time.Hour,
		Budgeting:      "Occurrences",
		Evaluation:     time.Minute,
		ScrapeInterval: 30 * time.Second,
		Alerting: model.Alerting{Tiers: []model.Tier{{Severity: "page", For: 5 * time.Minute, Windows: []model.WindowPair{
			{Long: time.Hour, Short: 5 * time.Minute, Factor: dec(t, "14.4")},
		}}}},
		SLI: model.SLI{
			Counter: true,
			Total:   &model.Query{Expr: `http_requests_total{job="checkout"}`},
			Bad:     &model.Query{Expr: `http_requests_total{job="checkout",code=~"5.."}`},
		},
	}
}

// searchSLO reads a success ratio directly (OpenSLO rawMetric): it records
// no event counts.
func searchSLO(t testing.TB) model.SLO {
	s := checkoutSLO(t)
	s.Name, s.Service, s.Source = "search-quality", model.Service{Name: "search"}, "examples/search.yaml"
	s.SLI = model.SLI{Raw: &model.Query{Expr: `avg(search_success_ratio{job="search"})`}, RawType: "success"}
	return s
}

// fixtureSet is the chat service on vLLM (TTFT, ITL and errors SLOs), a
// plain-ratio checkout service and a raw-ratio search service.
func fixtureSet(t testing.TB) model.Set {
	set := model.Set{SLOs: []model.SLO{
		vllmSLO(t, "ttft", "0.5", "99%"),
		vllmSLO(t, "itl", "0.05", "99%"),
		vllmSLO(t, "errors", "", "99.9%"),
		checkoutSLO(t),
		searchSLO(t),
	}}
	set.Sort()
	return set
}
