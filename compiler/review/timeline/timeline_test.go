package timeline

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
)

// chatSet is a two-SLO service whose engine exposes the dashboard gauges.
func chatSet(t *testing.T) model.Set {
	t.Helper()
	var set model.Set
	for _, role := range []string{"errors", "ttft"} {
		slo := slotest.VLLM(t, role, map[string]string{"errors": "99.9%", "ttft": "99%"}[role])
		slo.Inference.Signals.QueueDepth = "vllm:num_requests_waiting"
		slo.Inference.Signals.Running = "vllm:num_requests_running"
		slo.Inference.Signals.KVCacheUsage = "vllm:kv_cache_usage_perc"
		slo.Inference.Signals.PromptTokens = "vllm:prompt_tokens_total"
		set.SLOs = append(set.SLOs, slo)
	}
	return set
}

// during splits a series' values into those inside [from, to] and outside.
func during(s TimeSeries, from, to time.Time) (in, out []float64) {
	for _, p := range s.Points {
		if !p.T.Before(from) && !p.T.After(to) {
			in = append(in, p.V)
		} else {
			out = append(out, p.V)
		}
	}
	return in, out
}

func maxOf(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

func TestTimeline(t *testing.T) {
	t.Parallel()
	set := chatSet(t)
	ttft, errs := set.SLOs[1], set.SLOs[0]
	burnQ := model.BurnRate(ttft, ttft.BaseWindow())
	queueQ := `sum(vllm:num_requests_waiting{model_name="llama-3-70b"})`
	tokensQ := `sum(rate(vllm:prompt_tokens_total{model_name="llama-3-70b"}[5m]))`
	alertsQ := `sum by (slo, severity) (ALERTS{alertstate="firing",service="chat"})`
	queries := []string{burnQ, queueQ, tokensQ, alertsQ}
	opts := TimelineOptions{Healthy: 6 * time.Hour}

	start := time.Now()
	tl, err := runTimeline(set, queries, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %s in %s", tl.To.Sub(tl.From), time.Since(start))
	if len(tl.Burns) != 1 {
		t.Fatalf("%d burns, want 1", len(tl.Burns))
	}
	burn := tl.Burns[0]

	t.Run("the burn shows in the burn-rate series and only there", func(t *testing.T) {
		ss := tl.Series[burnQ]
		if len(ss) != 1 {
			t.Fatalf("%d series for %s", len(ss), burnQ)
		}
		page, _ := predict.TierBySeverity(ttft, "page")
		in, out := during(ss[0], burn.From, burn.To.Add(ttft.BaseWindow()))
		if got := maxOf(in); got < predict.Factors(page)[len(predict.Factors(page))-1] {
			t.Errorf("burn rate peaks at %g during the burn, below the page factors %v", got, predict.Factors(page))
		}
		if got := maxOf(out); got >= 1 {
			t.Errorf("burn rate reaches %g outside the burn", got)
		}
	})
	t.Run("every SLO pages during the burn and resolves after it", func(t *testing.T) {
		for _, slo := range []model.SLO{errs, ttft} {
			var found []AlertInterval
			for _, a := range tl.Alerts {
				if a.SLO == slo.Name && a.Severity == "page" {
					found = append(found, a)
				}
			}
			if len(found) != 1 {
				t.Fatalf("%s: %d page intervals %+v, want 1", slo.Name, len(found), found)
			}
			a := found[0]
			if a.From.Before(burn.From) || a.From.After(burn.To) {
				t.Errorf("%s pages at %s, outside the burn %s..%s", slo.Name, a.From, burn.From, burn.To)
			}
			if !a.To.After(a.From) || !a.To.Before(tl.To) {
				t.Errorf("%s page interval %s..%s does not resolve before the end %s", slo.Name, a.From, a.To, tl.To)
			}
		}
	})
	t.Run("the ALERTS series agree with the intervals", func(t *testing.T) {
		pages := 0
		for _, s := range tl.Series[alertsQ] {
			if s.Labels["severity"] == "page" {
				pages++
			}
		}
		if pages != 2 {
			t.Errorf("%d page series in ALERTS, want 2", pages)
		}
	})
	t.Run("the engine gauges and token counters are there and react to the burn", func(t *testing.T) {
		q := tl.Series[queueQ]
		if len(q) != 1 {
			t.Fatalf("%d queue series", len(q))
		}
		in, out := during(q[0], burn.From.Add(time.Minute), burn.To)
		if maxOf(in) <= maxOf(out) {
			t.Errorf("queue peaks at %g during the burn and %g outside", maxOf(in), maxOf(out))
		}
		tok := tl.Series[tokensQ]
		if len(tok) != 1 || len(tok[0].Points) == 0 {
			t.Fatalf("token rate: %+v", tok)
		}
		// 3 pods at 10 rps on average, 900 prompt tokens each, a ±40% daily cycle.
		if v := tok[0].Points[len(tok[0].Points)/2].V; v < 0.5*27000 || v > 1.5*27000 {
			t.Errorf("prompt token rate %g, want about 27000/s", v)
		}
	})
	t.Run("points are coarse before the burn and fine around it", func(t *testing.T) {
		ps := tl.Series[burnQ][0].Points
		if d := ps[1].T.Sub(ps[0].T); d != 5*time.Minute {
			t.Errorf("first step %s, want 5m", d)
		}
		if d := ps[len(ps)-1].T.Sub(ps[len(ps)-2].T); d != time.Minute {
			t.Errorf("last step %s, want 1m", d)
		}
	})

	t.Run("a healthy-only replay pages nobody", func(t *testing.T) {
		opts.SkipBurn = true
		tl, err := runTimeline(set, queries, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(tl.Burns) != 0 {
			t.Errorf("burns %+v", tl.Burns)
		}
		for _, a := range tl.Alerts {
			if a.Severity == "page" {
				t.Errorf("page interval %+v", a)
			}
		}
		if len(tl.Series[burnQ]) != 1 || maxOf(values(tl.Series[burnQ][0])) >= 1 {
			t.Errorf("healthy burn rate series: %+v", tl.Series[burnQ])
		}
	})
}

func values(s TimeSeries) []float64 {
	var out []float64
	for _, p := range s.Points {
		out = append(out, p.V)
	}
	return out
}

// The replay evaluates only base-window recordings between query steps far
// from the burn; every series must read the same at the query steps as if
// whole groups had been evaluated every interval.
func TestTimelineShortcutChangesNoQueriedValue(t *testing.T) {
	t.Parallel()
	queries, fast, exact := fastAndExact(t, TimelineOptions{Healthy: 4 * time.Hour, SkipBurn: true})
	for _, q := range queries {
		a, b := fast.Series[q], exact.Series[q]
		if len(a) != 1 || len(b) != 1 || len(a[0].Points) != len(b[0].Points) || len(a[0].Points) < 40 {
			t.Fatalf("%s: %d and %d series", q, len(a), len(b))
		}
		for i, p := range a[0].Points {
			if e := b[0].Points[i]; !p.T.Equal(e.T) || math.Abs(p.V-e.V) > 1e-9*math.Abs(e.V) {
				t.Fatalf("%s at %s: %g, whole groups give %g at %s", q, p.T, p.V, e.V, e.T)
			}
		}
	}
}

// fastAndExact replays the chat SLOs' timeline twice, as the product does
// and evaluating every rule at every step, querying each SLO's burn rates,
// its budget left and the extra queries.
func fastAndExact(t *testing.T, opts TimelineOptions, extra ...string) ([]string, Timeline, Timeline) {
	t.Helper()
	set := chatSet(t)
	var queries []string
	for _, slo := range set.SLOs {
		for _, w := range slo.Windows() {
			queries = append(queries, model.BurnRate(slo, w))
		}
		queries = append(queries, model.Selector(model.BudgetRemaining, slo, 0))
		queries = append(queries, extra...)
	}
	fast, err := runTimeline(set, queries, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.everyRule = true
	exact, err := runTimeline(set, queries, opts)
	if err != nil {
		t.Fatal(err)
	}
	return queries, fast, exact
}

// The hour before the burn and the tail after it are evaluated as spans,
// where the traffic does not depend on the alerts; the series and the
// alerts must come out as evaluating every step does.
func TestTimelineSpansChangeNoSeriesNorAlert(t *testing.T) {
	t.Parallel()
	queries, fast, exact := fastAndExact(t, TimelineOptions{Healthy: 2 * time.Hour, Recovery: 2 * time.Hour}, `ALERTS`)
	if len(exact.Alerts) == 0 || !reflect.DeepEqual(fast.Alerts, exact.Alerts) {
		t.Fatalf("alerts %v, step by step %v", fast.Alerts, exact.Alerts)
	}
	if !reflect.DeepEqual(fast.Series, exact.Series) {
		for _, q := range queries {
			if !reflect.DeepEqual(fast.Series[q], exact.Series[q]) {
				t.Fatalf("%s: %v, step by step %v", q, fast.Series[q], exact.Series[q])
			}
		}
		t.Fatal("series differ")
	}
}

// An SLO that pages nobody burns its quickest ticket tier until it fires.
func TestTimelineBurnsTheTicketWhenNothingPages(t *testing.T) {
	t.Parallel()
	slo := slotest.VLLM(t, "errors", "99.5%")
	var tickets []model.Tier
	for _, tier := range slo.Alerting.Tiers {
		if tier.Severity == "ticket" {
			tickets = append(tickets, tier)
		}
	}
	slo.Alerting.Tiers = tickets
	tl, err := runTimeline(model.Set{SLOs: []model.SLO{slo}}, nil, TimelineOptions{Healthy: 6 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Burns) != 1 {
		t.Fatalf("burns %+v", tl.Burns)
	}
	var ticket []AlertInterval
	for _, a := range tl.Alerts {
		if a.Severity == "page" {
			t.Errorf("page interval %+v without a page tier", a)
		}
		if a.Severity == "ticket" && a.Name == model.AlertBurn {
			ticket = append(ticket, a)
		}
	}
	b := tl.Burns[0]
	if len(ticket) == 0 || ticket[0].From.Before(b.From) || ticket[0].From.After(b.To) {
		t.Errorf("ticket intervals %+v, want one starting in the burn %s..%s", ticket, b.From, b.To)
	}
}

// BenchmarkTimelineExamples replays the review scenario for every example
// service; `inferslo render examples` must stay well under a minute on two
// cores, and this is nearly all of its time.
func BenchmarkTimelineExamples(b *testing.B) {
	set := slotest.Examples(b).Set
	var queries []string
	for _, slo := range set.SLOs {
		queries = append(queries, model.BurnRate(slo, slo.BaseWindow()), model.Selector(model.BudgetRemaining, slo, 0))
	}
	for b.Loop() {
		if _, err := runTimeline(set, queries, TimelineOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAGroupedSLOReplaysSeveralGroupsOfWhichOnlyTheFirstBurnsAndPages(t *testing.T) {
	t.Parallel()
	slo := slotest.VLLM(t, "errors", "99.9%")
	slo.Inference.Selector, slo.Inference.SelectorLabels = `namespace="llm"`, []string{"namespace"}
	slo.SLI.Total.Expr = `vllm:request_success_total{namespace="llm"}`
	slo.SLI.Bad.Expr = `vllm:request_success_total{namespace="llm",finished_reason="error"}`
	slo.GroupBy = []string{"model_name"}
	set := model.Set{SLOs: []model.SLO{slo}}
	burnQ := model.BurnRate(slo, slo.BaseWindow())
	tl, err := runTimeline(set, []string{burnQ}, TimelineOptions{Healthy: 3 * time.Hour, Recovery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Burns) != 1 || tl.Burns[0].Groups[slo.Name] != `model_name="vllm-a"` {
		t.Fatalf("burns %+v, want one naming the burning group", tl.Burns)
	}
	burn := tl.Burns[0]
	page, _ := predict.TierBySeverity(slo, "page")
	peaks := map[string]float64{}
	for _, s := range tl.Series[burnQ] {
		in, _ := during(s, burn.From, burn.To.Add(slo.BaseWindow()))
		peaks[s.Labels["model_name"]] = maxOf(in)
	}
	if len(peaks) != 3 {
		t.Fatalf("burn-rate series by model %v, want one line per group, three groups", peaks)
	}
	for model, peak := range peaks {
		burning := model == "vllm-a"
		if burning != (peak >= predict.Factors(page)[0]) {
			t.Errorf("model %s peaks at burn rate %g; only vllm-a burns", model, peak)
		}
	}
	var paged []string
	for _, a := range tl.Alerts {
		if a.Name == model.AlertBurn {
			paged = append(paged, a.Severity+" "+a.Group)
		}
	}
	if len(paged) == 0 {
		t.Fatal("no burn alert fired")
	}
	for _, p := range paged {
		if !strings.HasSuffix(p, ` model_name="vllm-a"`) {
			t.Errorf("burn alert %q fired for a group that did not burn, or names none", p)
		}
	}
}

func TestEachEngineOfAServiceCarriesItsOwnLoadGauges(t *testing.T) {
	t.Parallel()
	set := slotest.Parse(t, `
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: mixed-vllm}
spec:
  service: mixed
  engine: vllm
  selector: {namespace: a}
  window: 28d
  objectives: [{sli: errors, target: 99.9%}]
---
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: mixed-sglang}
spec:
  service: mixed
  engine: sglang
  selector: {namespace: b}
  window: 28d
  objectives: [{sli: errors, target: 99.9%, total: 'sglang:num_requests_total', bad: 'sglang:num_aborted_requests_total'}]
`)
	queries := []string{`sum(vllm:num_requests_waiting{namespace="a"})`, `sum(sglang:num_queue_reqs{namespace="b"})`}
	tl, err := runTimeline(set, queries, TimelineOptions{Healthy: 2 * time.Hour, SkipBurn: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		if len(tl.Series[q]) != 1 || len(tl.Series[q][0].Points) == 0 {
			t.Errorf("%s has no replayed series: %+v", q, tl.Series[q])
		}
	}
}

// Goodput's bounds are recorded in the TPOT SLO's group from the TTFT SLO's
// error ratios: replayed in harnesses of their own, the TPOT harness is
// given the TTFT harness's recordings, so the bounds have values, the upper
// at or above the lower, and both drop during the burn.
func TestGoodputBoundsReadTheOtherSLOsRecordings(t *testing.T) {
	t.Parallel()
	set := slotest.Parse(t, `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: coder}
spec:
  engine: vllm
  selector: {model_name: coder}
  window: 7d
  objectives:
    - {sli: ttft, threshold: 500ms, target: 99%}
    - {sli: tpot, threshold: 50ms, target: 99%}
`)
	if len(model.GoodputPairs(set.SLOs)) != 1 {
		t.Fatalf("no goodput pair in %d SLOs", len(set.SLOs))
	}
	// As the dashboard's panel selects them: by the pair's name.
	pair := model.GoodputPairs(set.SLOs)[0]
	base := `{slo="` + pair.Name() + `",window="` + model.FormatDuration(set.SLOs[0].BaseWindow()) + `"}`
	lower, upper := model.GoodputLower+base, model.GoodputUpper+base
	tl, err := runTimeline(set, []string{lower, upper}, TimelineOptions{Healthy: 3 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	lo, up := tl.Series[lower], tl.Series[upper]
	if len(lo) != 1 || len(up) != 1 {
		t.Fatalf("goodput bounds: %d lower and %d upper series, want one each", len(lo), len(up))
	}
	if len(lo[0].Points) < 20 {
		t.Fatalf("%d points of the lower bound", len(lo[0].Points))
	}
	at := map[time.Time]float64{}
	for _, p := range up[0].Points {
		at[p.T] = p.V
	}
	for _, p := range lo[0].Points {
		if u, ok := at[p.T]; ok && u < p.V-1e-9 {
			t.Errorf("at %s the upper bound %g is below the lower %g", p.T, u, p.V)
		}
	}
	b := tl.Burns[0]
	in, out := during(lo[0], b.From, b.To.Add(set.SLOs[0].BaseWindow()))
	if len(in) == 0 || len(out) == 0 || minOf(in) >= minOf(out) {
		t.Errorf("the lower bound does not drop during the burn: min %g in it, %g outside", minOf(in), minOf(out))
	}
}

func minOf(vs []float64) float64 {
	m := math.Inf(1)
	for _, v := range vs {
		m = min(m, v)
	}
	return m
}

// runTimeline replays every service of set, evaluating queries in each, and
// merges the timelines in service order.
func runTimeline(set model.Set, queries []string, opts TimelineOptions) (Timeline, error) {
	tls := make([]Timeline, len(set.InSpecOrder()))
	err := RunServiceTimelines(set, func(string) []string { return queries }, opts, func(i int, _ string, tl Timeline) error {
		tls[i] = tl
		return nil
	})
	return Merge(tls), err
}
