package simulate

import (
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/internal/exporter"
)

func decimal(t testing.TB, s string) model.Decimal {
	t.Helper()
	d, err := model.ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func workbook(t testing.TB, window, scrape, eval time.Duration) []model.Tier {
	t.Helper()
	tiers, err := model.WorkbookTiers(window, 4*scrape, eval)
	if err != nil {
		t.Fatal(err)
	}
	return tiers
}

// vllmSLO is an SLO on vLLM's metrics as the shorthand resolves it: 28d,
// 1m evaluation, 30s scrapes, workbook tiers.
func vllmSLO(t testing.TB, role, target string) model.SLO {
	t.Helper()
	const sel = `model_name="llama-3-70b"`
	slo := model.SLO{
		Name: "chat-" + role, Service: model.Service{Name: "chat"}, Source: "chat.yaml",
		Objective: decimal(t, target), Window: 28 * 24 * time.Hour, Budgeting: "Occurrences",
		Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
		Alerting: model.Alerting{Tiers: workbook(t, 28*24*time.Hour, 30*time.Second, time.Minute), NoData: true},
		Inference: &model.Inference{
			Engine: "vllm", EngineTitle: "vLLM", Role: role, Selector: sel, SelectorLabels: []string{"model_name"},
			Signals: model.Signals{Requests: "vllm:request_success_total", TTFT: "vllm:time_to_first_token_seconds"},
		},
	}
	switch role {
	case "ttft":
		slo.Inference.Threshold = decimal(t, "0.5")
		slo.Inference.Histogram = "vllm:time_to_first_token_seconds"
		slo.Inference.Buckets = exporter.TTFTBuckets()
		slo.Inference.TTFTDenominator = "histogram"
		slo.SLI = model.SLI{Counter: true,
			Total: &model.Query{Expr: `vllm:time_to_first_token_seconds_count{` + sel + `}`},
			Good:  &model.Query{Expr: `vllm:time_to_first_token_seconds_bucket{le="0.5",` + sel + `}`}}
	case "errors":
		slo.SLI = model.SLI{Counter: true,
			Total: &model.Query{Expr: `vllm:request_success_total{` + sel + `}`},
			Bad:   &model.Query{Expr: `vllm:request_success_total{finished_reason="error",` + sel + `}`}}
	}
	return slo
}

// gatewaySLO is a plain OpenSLO ratio over HTTP counters, 7d window.
func gatewaySLO(t testing.TB) model.SLO {
	t.Helper()
	return model.SLO{
		Name: "gateway-availability", Service: model.Service{Name: "gateway"}, Source: "gateway.yaml",
		Objective: decimal(t, "99.5%"), Window: 7 * 24 * time.Hour, Budgeting: "Occurrences",
		Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
		Alerting: model.Alerting{Tiers: workbook(t, 7*24*time.Hour, 30*time.Second, time.Minute)},
		SLI: model.SLI{Counter: true,
			Total: &model.Query{Expr: `sum(http_requests_total{job="gateway"})`},
			Bad:   &model.Query{Expr: `sum(http_requests_total{code=~"5..",job="gateway"})`}},
	}
}

// simOf simulates slo against the rules compiled from written (the same
// SLO, or one whose rules differ), with the default options.
func simOf(t testing.TB, slo, written model.SLO) *sloSim {
	t.Helper()
	files, err := irules.Build(model.Set{SLOs: []model.SLO{written}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, err := indexRules(files)
	if err != nil {
		t.Fatal(err)
	}
	return &sloSim{slo: slo, rules: x.byName()[irules.GroupName(slo)], opts: Options{}.withDefaults()}
}
