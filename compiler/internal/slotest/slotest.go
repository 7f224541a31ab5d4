// Package slotest holds the SLOs the simulation tests of several packages
// share: vLLM and gateway SLOs as the shorthand resolves them, the
// repository's examples and specs parsed from text.
package slotest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/internal/exporter"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

func Decimal(t testing.TB, s string) model.Decimal {
	t.Helper()
	d, err := model.ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func Workbook(t testing.TB, window, scrape, eval time.Duration) []model.Tier {
	t.Helper()
	tiers, err := model.WorkbookTiersOf(model.Severities, window, 4*scrape, eval)
	if err != nil {
		t.Fatal(err)
	}
	return tiers
}

// VLLM is an SLO on vLLM's metrics as the shorthand resolves it: 28d,
// 1m evaluation, 30s scrapes, workbook tiers.
func VLLM(t testing.TB, role, target string) model.SLO {
	t.Helper()
	const sel = `model_name="llama-3-70b"`
	slo := model.SLO{
		Name: "chat-" + role, Service: model.Service{Name: "chat"}, Source: "chat.yaml",
		Objective: Decimal(t, target), Window: 28 * 24 * time.Hour, Budgeting: "Occurrences",
		Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
		Alerting: model.Alerting{Tiers: Workbook(t, 28*24*time.Hour, 30*time.Second, time.Minute), NoData: true},
		Inference: &model.Inference{
			Engine: "vllm", EngineTitle: "vLLM", Role: role, Selector: sel, SelectorLabels: []string{"model_name"},
			Signals: model.Signals{Requests: "vllm:request_success_total", TTFT: "vllm:time_to_first_token_seconds"},
		},
	}
	switch role {
	case "ttft":
		slo.Inference.Threshold = Decimal(t, "0.5")
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

// Gateway is a plain OpenSLO ratio over HTTP counters, 7d window.
func Gateway(t testing.TB) model.SLO {
	t.Helper()
	return model.SLO{
		Name: "gateway-availability", Service: model.Service{Name: "gateway"}, Source: "gateway.yaml",
		Objective: Decimal(t, "99.5%"), Window: 7 * 24 * time.Hour, Budgeting: "Occurrences",
		Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
		Alerting: model.Alerting{Tiers: Workbook(t, 7*24*time.Hour, 30*time.Second, time.Minute)},
		SLI: model.SLI{Counter: true,
			Total: &model.Query{Expr: `sum(http_requests_total{job="gateway"})`},
			Bad:   &model.Query{Expr: `sum(http_requests_total{code=~"5..",job="gateway"})`}},
	}
}

// Examples resolves the repository's example specs.
func Examples(t testing.TB) spec.Result {
	t.Helper()
	res, err := spec.Load(filepath.Join(root(t), "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res
}

func Parse(t testing.TB, doc string) model.Set {
	t.Helper()
	res, err := spec.Parse(spec.Source{Name: "spec.yaml", Data: []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res.Set
}

// root is the repository's root folder, the first above the working
// folder that holds go.mod.
func root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the working folder")
		}
		dir = up
	}
}
