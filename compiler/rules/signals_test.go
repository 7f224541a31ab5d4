package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// sheddingSLO is a TTFT SLO over the histogram h (buckets 0.1 to 1s, the
// threshold 0.25s) with load-shedding signals at the given factors and holds.
func sheddingSLO(shed, reduce model.ShedSignal, native, outage bool) model.SLO {
	slo := model.SLO{Name: "x-ttft", Service: model.Service{Name: "x"}, Objective: model.NewDecimal(99, 100),
		SLI:       model.SLI{Counter: true, Total: &model.Query{Expr: `h_count{m="a"}`}, Good: &model.Query{Expr: `h_bucket{le="0.25",m="a"}`}},
		Inference: &model.Inference{Role: "ttft", Threshold: model.NewDecimal(25, 100), Histogram: "h", Buckets: []float64{0.1, 0.25, 0.5, 1}, Unit: "seconds", Selector: `m="a"`, Native: native},
		Window:    28 * 24 * time.Hour, Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
		Alerting: model.Alerting{Shedding: &model.Shedding{Shed: shed, ReduceContext: reduce}}}
	if outage {
		o := model.OutageTierOf(slo.Objective, 2*time.Minute)
		slo.Alerting.Outage = &o
	}
	return slo
}

func TestTheSheddingSignalsReadTheFewestSeriesThatGiveTheQuantilesAnswer(t *testing.T) {
	twice, thrice, fourfold := model.NewDecimal(2, 1), model.NewDecimal(3, 1), model.NewDecimal(4, 1)
	share := `sum(rate(h_bucket{le="0.5",m="a"}[2m])) / sum(rate(h_count{m="a"}[2m])) < bool 0.99`
	for _, c := range []struct {
		name            string
		shed, reduce    model.ShedSignal
		native, outage  bool
		wantShed        string
		wantReduce      string
		wantQuantileRec bool
	}{
		{"a bound at a bucket compares the share of requests within it, and the second signal at it reads the first",
			model.ShedSignal{Factor: twice, For: 30 * time.Second}, model.ShedSignal{Factor: twice, For: 10 * time.Second}, false, false,
			share, `inferslo:load_shed:active{slo="x-ttft"}`, false},
		{"the outage tier's events recording of the same window is read instead of the count",
			model.ShedSignal{Factor: twice}, model.ShedSignal{Factor: twice}, false, true,
			`sum(rate(h_bucket{le="0.5",m="a"}[2m])) / on () inferslo:sli_events:rate{slo="x-ttft",window="2m"} < bool 0.99`, `inferslo:load_shed:active{slo="x-ttft"}`, false},
		{"a bound between buckets compares the quantile, recorded once",
			model.ShedSignal{Factor: thrice}, model.ShedSignal{Factor: twice}, false, false,
			`inferslo:ttft_quantile:seconds{slo="x-ttft"} > bool 0.75`, share, true},
		{"the highest finite bucket keeps the quantile, which never rises past it",
			model.ShedSignal{Factor: fourfold}, model.ShedSignal{Factor: fourfold}, false, false,
			`inferslo:ttft_quantile:seconds{slo="x-ttft"} > bool 1`, `inferslo:load_shed:active{slo="x-ttft"}`, true},
		{"a native histogram keeps the quantile",
			model.ShedSignal{Factor: twice}, model.ShedSignal{Factor: twice}, true, false,
			`inferslo:ttft_quantile:seconds{slo="x-ttft"} > bool 0.5`, `inferslo:load_shed:active{slo="x-ttft"}`, true},
		{"a hold longer than a scrape checks the share at every scrape from raw series",
			model.ShedSignal{Factor: twice, For: 2 * time.Minute}, model.ShedSignal{Factor: twice}, false, true,
			`min_over_time((` + share + `)[2m:30s])`,
			`sum(rate(h_bucket{le="0.5",m="a"}[2m])) / on () inferslo:sli_events:rate{slo="x-ttft",window="2m"} < bool 0.99`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := Group(sheddingSLO(c.shed, c.reduce, c.native, c.outage), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range g.Rules {
				if r.Record != "" {
					got[r.Record] = r.Expr
				}
			}
			if got[LoadShed] != c.wantShed {
				t.Errorf("%s:\n got %s\nwant %s", LoadShed, got[LoadShed], c.wantShed)
			}
			if got[ContextReduce] != c.wantReduce {
				t.Errorf("%s:\n got %s\nwant %s", ContextReduce, got[ContextReduce], c.wantReduce)
			}
			q, ok := got[ShedQuantile]
			if ok != c.wantQuantileRec {
				t.Errorf("%s recorded: %v, want %v", ShedQuantile, ok, c.wantQuantileRec)
			}
			if ok && !strings.HasPrefix(q, "histogram_quantile(0.99, ") {
				t.Errorf("%s is %s", ShedQuantile, q)
			}
		})
	}
}
