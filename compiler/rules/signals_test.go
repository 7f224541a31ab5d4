package rules

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"

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
		{"a bound between buckets compares the share interpolated between them",
			model.ShedSignal{Factor: thrice}, model.ShedSignal{Factor: twice}, false, false,
			`(0.25 * sum(rate(h_bucket{le="0.5",m="a"}[2m])) + 0.25 * sum(rate(h_bucket{le="1.0",m="a"}[2m]))) / 0.5 / sum(rate(h_count{m="a"}[2m])) < bool 0.99`, share, false},
		{"a bound below the lowest bucket interpolates from zero",
			model.ShedSignal{Factor: model.NewDecimal(2, 10)}, model.ShedSignal{Factor: twice}, false, false,
			`0.05 * sum(rate(h_bucket{le="0.1",m="a"}[2m])) / 0.1 / sum(rate(h_count{m="a"}[2m])) < bool 0.99`, share, false},
		{"a bound past the highest finite bucket compares the quantile, recorded once",
			model.ShedSignal{Factor: model.NewDecimal(5, 1)}, model.ShedSignal{Factor: twice}, false, false,
			`inferslo:ttft_quantile:seconds{slo="x-ttft"} > bool 1.25`, share, true},
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

// TestTheSheddingShareFiresExactlyWhenTheQuantileIsAboveTheBound evaluates
// each form of the share (at a bucket, between two, below the lowest) and
// the quantile it stands for in Prometheus' engine over random histograms,
// one per group, and expects the same 0 or 1 for every group and time.
func TestTheSheddingShareFiresExactlyWhenTheQuantileIsAboveTheBound(t *testing.T) {
	les := []string{"0.1", "0.25", "0.5", "1.0", "+Inf"}
	rnd := rand.New(rand.NewPCG(1, 2))
	var series strings.Builder
	const groups, scrapes = 60, 24
	for g := range groups {
		cum := make([]int, len(les))
		vals := make([][]string, len(les))
		for s := 0; s <= scrapes; s++ {
			if s > 0 {
				// Each scrape brings up to 400 requests; a share of up to
				// 4.5% (the group's, moving from scrape to scrape) lands in
				// a random slower bucket, so the p99 lands anywhere.
				n, slow := rnd.IntN(401), float64(g%8)/200+rnd.Float64()/100
				for range n {
					b := rnd.IntN(1 + g%2) // half the groups keep every fast request under 0.1
					if rnd.Float64() < slow {
						b = 1 + rnd.IntN(len(les)-1)
					}
					for i := b; i < len(les); i++ {
						cum[i]++
					}
				}
			}
			for i := range les {
				vals[i] = append(vals[i], fmt.Sprint(cum[i]))
			}
		}
		for i, le := range les {
			fmt.Fprintf(&series, "  h_bucket{m=\"a\",g=\"%d\",le=\"%s\"} %s\n", g, le, strings.Join(vals[i], " "))
		}
		fmt.Fprintf(&series, "  h_count{m=\"a\",g=\"%d\"} %s\n", g, strings.Join(vals[len(les)-1], " "))
	}
	ll, err := promqltest.NewLazyLoader("load 30s\n"+series.String(), promqltest.LazyLoaderOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer ll.Close()
	start := time.Unix(0, 0).UTC()
	ll.WithSamplesTill(start.Add(scrapes*30*time.Second), func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	})
	query := func(expr string, at time.Time) map[string]float64 {
		t.Helper()
		q, err := ll.QueryEngine().NewInstantQuery(context.Background(), ll.Storage(), nil, expr, at)
		if err != nil {
			t.Fatal(err)
		}
		res := q.Exec(context.Background())
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		out := map[string]float64{}
		for _, s := range res.Value.(promql.Vector) {
			out[s.Metric.Get("g")] = s.F
		}
		return out
	}
	for _, f := range []struct {
		name   string
		factor model.Decimal
	}{{"below the lowest bucket", model.NewDecimal(398, 1000)}, {"at a bucket", model.NewDecimal(2, 1)}, {"between buckets", model.NewDecimal(8, 10)},
		{"between the two highest finite buckets", model.NewDecimal(3, 1)}} {
		t.Run(f.name, func(t *testing.T) {
			slo := sheddingSLO(model.ShedSignal{Factor: f.factor}, model.ShedSignal{Factor: f.factor}, false, false)
			slo.GroupBy = []string{"g"}
			g, err := Group(slo, nil)
			if err != nil {
				t.Fatal(err)
			}
			var share string
			for _, r := range g.Rules {
				if r.Record == LoadShed {
					share = r.Expr
				}
			}
			if strings.Contains(share, "histogram_quantile") {
				t.Fatalf("the signal compares the quantile: %s", share)
			}
			bound := slo.Inference.NativeThreshold().Mul(f.factor)
			quantile := fmt.Sprintf(`histogram_quantile(0.99, sum by (le, g) (rate(h_bucket{m="a"}[2m]))) > bool %s`, bound)
			fired, calm := 0, 0
			for s := 4; s <= scrapes; s++ {
				at := start.Add(time.Duration(s) * 30 * time.Second)
				got, want := query(share, at), query(quantile, at)
				for grp, w := range want {
					if got[grp] != w && !(math.IsNaN(w) && got[grp] == 0) {
						t.Errorf("group %s at %s: the share gives %v, the quantile %v (%s)", grp, at.Sub(start), got[grp], w, share)
					}
					if w == 1 {
						fired++
					} else {
						calm++
					}
				}
			}
			t.Logf("above %s at %d group-times, not above at %d", bound, fired, calm)
			if fired == 0 || calm == 0 {
				t.Errorf("the quantile was above %s %d times and not above it %d times: the case proves little", bound, fired, calm)
			}
		})
	}
}
