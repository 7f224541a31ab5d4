package backtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/internal/promserver"
	"github.com/inferslo/inferslo/compiler/query"

	"gopkg.in/yaml.v3"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/spec"
)

// fleetSpec is one errors SLO per model (groupBy), at 2m scrapes and 4m
// evaluations: 30 days are 10,800 evaluations. At 1m scrapes and
// evaluations the replay alone took minutes of CPU (43,200 evaluations,
// each reading 4x the samples).
const fleetSpec = `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata:
  name: fleet
spec:
  engine: vllm
  selector: {namespace: llm}
  groupBy: [model_name]
  window: 28d
  scrapeInterval: 2m
  evaluationInterval: 4m
  objectives:
    - {sli: errors, target: 99%}
`

// history is a generated month of vLLM request counters for two models:
// healthy at a twentieth of the budget rate, but for one fast burn on
// model-a (20% failed, 20x the budget rate, for an hour) and one slow burn
// on model-b (4% failed, 4x, for a day and a half).
type history struct {
	start       time.Time
	scrape      time.Duration
	days        int
	pods        int
	rps         float64
	fast, slow  [2]time.Time
	fastRatio   float64
	slowRatio   float64
	healthyRate float64
}

func newHistory() history {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	return history{
		start: start, scrape: 2 * time.Minute, days: 30, pods: 2, rps: 5,
		fast:      [2]time.Time{start.Add(10*24*time.Hour + 12*time.Hour), start.Add(10*24*time.Hour + 13*time.Hour)},
		slow:      [2]time.Time{start.Add(20 * 24 * time.Hour), start.Add(21*24*time.Hour + 12*time.Hour)},
		fastRatio: 0.20, slowRatio: 0.04, healthyRate: 0.0005,
	}
}

func (h history) end() time.Time { return h.start.Add(time.Duration(h.days) * 24 * time.Hour) }

// errorRatio is the share of a model's requests failing at t.
func (h history) errorRatio(m string, t time.Time) float64 {
	switch {
	case m == "model-a" && !t.Before(h.fast[0]) && t.Before(h.fast[1]):
		return h.fastRatio
	case m == "model-b" && !t.Before(h.slow[0]) && t.Before(h.slow[1]):
		return h.slowRatio
	}
	return h.healthyRate
}

// each calls f with every sample of the history, series after series.
func (h history) each(f func(m string, pod int, reason string, t time.Time, v float64)) {
	for _, m := range []string{"model-a", "model-b"} {
		for pod := 0; pod < h.pods; pod++ {
			for _, reason := range []string{"stop", "error"} {
				var cum float64
				for t := h.start; t.Before(h.end()); t = t.Add(h.scrape) {
					n := h.rps * h.scrape.Seconds() * (0.5 + float64(pod))
					ratio := h.errorRatio(m, t)
					if reason == "stop" {
						cum += n * (1 - ratio)
					} else {
						cum += n * ratio
					}
					f(m, pod, reason, t, math.Floor(cum))
				}
			}
		}
	}
}

// writeOpenMetrics writes the history at one sample every two minutes, series
// after series, as promtool's backfill reads it.
func (h history) writeOpenMetrics(path string) error { return h.write(path, false) }

// write writes the history in OpenMetrics, or, with millis, in the
// Prometheus text format with millisecond timestamps that VictoriaMetrics
// imports.
func (h history) write(path string, millis bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "# HELP vllm:request_success Count of successfully processed requests.")
	fmt.Fprintln(w, "# TYPE vllm:request_success counter")
	h.each(func(m string, pod int, reason string, t time.Time, v float64) {
		ts := t.Unix()
		if millis {
			ts = t.UnixMilli()
		}
		fmt.Fprintf(w, "vllm:request_success_total{namespace=\"llm\",model_name=%q,pod=\"pod-%d\",finished_reason=%q} %g %d\n",
			m, pod, reason, v, ts)
	})
	if !millis {
		fmt.Fprintln(w, "# EOF")
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestBacktestFindsTheKnownIncidentsAsPrometheusDoes backfills a real
// Prometheus with a month holding two incidents, backtests the SLO over
// its HTTP API, and expects exactly one page on model-a and one ticket on
// model-b. Prometheus itself then evaluates the same rules over the same
// history (promtool's rule backfill, level by level, the alerts'
// conditions recorded as series): each alert fires within one evaluation
// interval of when the backtest says.
func TestBacktestFindsTheKnownIncidentsAsPrometheusDoes(t *testing.T) {
	promBin, toolBin := os.Getenv("INFERSLO_PROMETHEUS"), os.Getenv("INFERSLO_PROMTOOL")
	if promBin == "" || toolBin == "" {
		t.Skip("set INFERSLO_PROMETHEUS and INFERSLO_PROMTOOL to run the backtest against a real Prometheus")
	}
	if os.Getenv("INFERSLO_LONG") == "" {
		t.Skip("backfills and queries a real Prometheus for minutes of CPU; INFERSLO_LONG=1 runs it (CI's step of its own)")
	}
	began := time.Now()
	h := newHistory()
	dir := t.TempDir()
	om := filepath.Join(dir, "history.om")
	if err := h.writeOpenMetrics(om); err != nil {
		t.Fatal(err)
	}
	promserver.Run(t, toolBin, "tsdb", "create-blocks-from", "openmetrics", "--quiet",
		// Blocks of a month: promtool reads the whole file once per block,
		// and at its 2h default that took minutes.
		"--max-block-duration=744h", om, filepath.Join(dir, "data"))
	os.Remove(om)
	t.Logf("history written and backfilled in %s", time.Since(began).Round(time.Millisecond))

	res, err := spec.Parse(spec.Source{Name: "fleet.yaml", Data: []byte(fleetSpec)})
	if err != nil || len(res.Set.SLOs) != 1 {
		t.Fatalf("spec: %v %v", err, res.Problems)
	}
	set := res.Set
	p := &promserver.Server{T: t, Bin: promBin, Dir: dir}
	t.Cleanup(p.Stop)
	base := p.Start()

	from := h.start.Add(3 * 24 * time.Hour)
	began = time.Now()
	rep, err := Run(context.Background(), set, Options{Source: Source{URL: base}, From: from, To: h.end()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backtest of %s: %s (read %s: %d requests, %d bytes, %d samples; replayed in %s)", h.end().Sub(rep.Evaluated), time.Since(began).Round(time.Millisecond),
		rep.Stats.Read.Round(time.Millisecond), rep.Stats.Requests, rep.Stats.BytesRead, rep.Stats.Samples, rep.Stats.Replayed.Round(time.Millisecond))

	findsTheKnownIncidents(t, h, rep)
	// Reading the raw series instead of the server's answers replays the
	// same alerts and budgets, at many times the bytes read.
	began = time.Now()
	raw, err := Run(context.Background(), set, Options{Source: Source{URL: base}, From: from, To: h.end(), Read: ReadRaw})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the same backtest reading raw series: %s (read %s: %d requests, %d bytes, %d samples)", time.Since(began).Round(time.Millisecond),
		raw.Stats.Read.Round(time.Millisecond), raw.Stats.Requests, raw.Stats.BytesRead, raw.Stats.Samples)
	if got, want := alertLines(rep), alertLines(raw); got != want {
		t.Errorf("alerts differ:\nserver:\n%s\nraw:\n%s", got, want)
	}
	if len(raw.SLOs) != len(rep.SLOs) {
		t.Fatalf("%d SLO groups from the server's answers, %d from raw series", len(rep.SLOs), len(raw.SLOs))
	}
	for i, s := range rep.SLOs {
		if r := raw.SLOs[i]; !near(*s.SLI, *r.SLI) || !near(*s.BudgetSpent, *r.BudgetSpent) {
			t.Errorf("%v: sli %v and budget spent %v from the server's answers; %v and %v from raw series", s.Labels, *s.SLI, *s.BudgetSpent, *r.SLI, *r.BudgetSpent)
		}
	}
	// The SLI and budget follow from the generated ratios.
	for _, s := range rep.SLOs {
		if s.SLI == nil || *s.SLI < 0.99 || *s.SLI > 1 || *s.BudgetSpent <= 0 {
			t.Errorf("%s %v: sli %v, budget spent %v", s.SLO, s.Labels, s.SLI, s.BudgetSpent)
		}
	}

	// The HTML report shades the page on model-a's charts and the ticket
	// on model-b's, each on its own group only.
	html, err := rep.HTML(set, base)
	if err != nil {
		t.Fatal(err)
	}
	zoomed := 0
	for _, s := range strings.Split(string(html), `<section class="dashboard"`)[1:] {
		charts := 2
		if strings.HasPrefix(s, ` id="dashboard-slo-0-page"`) {
			charts = 1 // the page zoomed
			zoomed++
		}
		want := map[string]string{"model-a": "band-page", "model-b": "band-ticket"}
		for m, band := range want {
			if strings.Contains(s, "model_name="+m) {
				if n := strings.Count(s, `class="band `); n != charts || strings.Count(s, `class="band `+band) != charts {
					t.Errorf("%s: %d bands, want one %s on each of its %d charts", m, n, band, charts)
				}
			}
		}
	}
	if zoomed != 1 {
		t.Errorf("%d zoomed views of model-a's page, want 1", zoomed)
	}

	began = time.Now()
	fired := prometheusFirings(t, p, toolBin, set, rep.Evaluated, h.end())
	t.Logf("prometheus rule backfill: %s", time.Since(began).Round(time.Millisecond))
	for _, a := range rep.Alerts {
		k := a.AlertName + "/" + a.Severity + "/" + a.Labels["model_name"]
		times := fired[k]
		if len(times) != 1 {
			t.Errorf("%s: prometheus fired at %v, the backtest once at %s", k, times, a.FiredAt)
			continue
		}
		if d := times[0].Sub(a.FiredAt); d < -set.SLOs[0].Evaluation || d > set.SLOs[0].Evaluation {
			t.Errorf("%s: prometheus fired at %s, the backtest at %s: more than one evaluation interval apart", k, times[0], a.FiredAt)
		}
		delete(fired, k)
	}
	if len(fired) > 0 {
		t.Errorf("prometheus fired alerts the backtest did not: %v", fired)
	}
}

// findsTheKnownIncidents holds a backtest of the history to its incidents:
// exactly one page on model-a within the fast burn and one ticket on
// model-b within the slow burn, each resolved.
func findsTheKnownIncidents(t *testing.T, h history, rep *Report) {
	t.Helper()
	type key struct{ alert, severity, model string }
	got := map[key][]Alert{}
	for _, a := range rep.Alerts {
		k := key{a.AlertName, a.Severity, a.Labels["model_name"]}
		got[k] = append(got[k], a)
		t.Logf("backtest: %s %s %s fired %s resolved %v", a.AlertName, a.Severity, a.Labels["model_name"], a.FiredAt.Format(time.RFC3339), a.ResolvedAt)
	}
	page := key{model.AlertBurn, "page", "model-a"}
	ticket := key{model.AlertBurn, "ticket", "model-b"}
	if len(got) != 2 || len(got[page]) != 1 || len(got[ticket]) != 1 {
		t.Fatalf("alerts: got %v, want exactly one page on model-a and one ticket on model-b", got)
	}
	if a := got[page][0]; a.FiredAt.Before(h.fast[0]) || a.FiredAt.After(h.fast[1]) || a.ResolvedAt == nil {
		t.Errorf("the page fired at %s, outside the fast burn %s to %s, or never resolved", a.FiredAt, h.fast[0], h.fast[1])
	}
	if a := got[ticket][0]; a.FiredAt.Before(h.slow[0]) || a.FiredAt.After(h.slow[1]) || a.ResolvedAt == nil {
		t.Errorf("the ticket fired at %s, outside the slow burn %s to %s, or never resolved", a.FiredAt, h.slow[0], h.slow[1])
	}
}

// prometheusFirings has Prometheus evaluate the SLO's alerts over the
// history and returns each alert's fire times, keyed alert/severity/model.
// promtool backfills recording rules only and each rule reads what the
// server holds, so the rules the alerts need are backfilled one
// dependency level at a time, the server restarted over each level's
// blocks, and each alert's condition recorded as a series; an alert fires
// at the first evaluation its condition has held `for`.
func prometheusFirings(t *testing.T, p *promserver.Server, toolBin string, set model.Set, from, to time.Time) map[string][]time.Time {
	files, err := irules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rgs rulefmt.RuleGroups
	if err := yaml.Unmarshal(files[0].Data, &rgs); err != nil {
		t.Fatal(err)
	}
	type rule struct {
		rulefmt.Rule
		level int
	}
	var all []rule
	holds := map[string]time.Duration{}
	for _, g := range rgs.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				lbls := map[string]string{"alertname": r.Alert}
				for k, v := range r.Labels {
					lbls[k] = v
				}
				holds[r.Alert+"/"+r.Labels["severity"]] = time.Duration(r.For)
				r = rulefmt.Rule{Record: "inferslo_test:alert_condition", Expr: r.Expr, Labels: lbls}
			}
			all = append(all, rule{Rule: r})
		}
	}
	// level: one more than the deepest recording a rule reads.
	reads := func(expr string, rec rulefmt.Rule) bool {
		e, err := query.NewParser().ParseExpr(expr)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok || vs.Name != rec.Record {
				return nil
			}
			for _, m := range vs.LabelMatchers {
				if v, ok := rec.Labels[m.Name]; ok && !m.Matches(v) {
					return nil
				}
			}
			found = true
			return nil
		})
		return found
	}
	need := make([]bool, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Record == "inferslo_test:alert_condition" && all[i].Labels["alertname"] == model.AlertBurn {
			need[i] = true
		}
		if !need[i] {
			continue
		}
		for j := 0; j < i; j++ {
			if reads(all[i].Expr, all[j].Rule) {
				need[j] = true
			}
		}
	}
	levels := 0
	for i := range all {
		for j := 0; j < i; j++ {
			if need[i] && need[j] && reads(all[i].Expr, all[j].Rule) {
				all[i].level = max(all[i].level, all[j].level+1)
			}
		}
		if need[i] {
			levels = max(levels, all[i].level+1)
		}
	}
	// One path and group name for every level: promtool aligns a group's
	// evaluations by a hash of both, so every level evaluates at the same
	// instants.
	ruleFile := filepath.Join(p.Dir, "levels", "backfill.rules.yaml")
	if err := os.MkdirAll(filepath.Dir(ruleFile), 0o755); err != nil {
		t.Fatal(err)
	}
	for level := 0; level < levels; level++ {
		var g rulefmt.RuleGroup
		g.Name = "backfill"
		g.Interval = prommodel.Duration(set.SLOs[0].Evaluation)
		for i, r := range all {
			if need[i] && r.level == level {
				g.Rules = append(g.Rules, r.Rule)
			}
		}
		b, err := yaml.Marshal(rulefmt.RuleGroups{Groups: []rulefmt.RuleGroup{g}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ruleFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(p.Dir, fmt.Sprintf("level%d", level))
		// One block for the month: one query_range per rule instead of one
		// per rule and 2h block (the default took 19 minutes on a busy
		// machine).
		promserver.Run(t, toolBin, "tsdb", "create-blocks-from", "--max-block-duration=744h", "rules", "--url=http://"+p.Addr,
			"--start="+from.Format(time.RFC3339), "--end="+to.Format(time.RFC3339), "--output-dir="+out, ruleFile)
		p.Stop()
		blocks, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if err := os.Rename(filepath.Join(out, b.Name()), filepath.Join(p.Dir, "data", b.Name())); err != nil {
				t.Fatal(err)
			}
		}
		p.Start()
	}
	// Raw samples of the conditions, one per evaluation while each holds.
	q := url.Values{}
	q.Set("query", fmt.Sprintf("inferslo_test:alert_condition[%ds]", int(to.Sub(from).Seconds())+60))
	q.Set("time", formatTime(to))
	resp, err := http.PostForm("http://"+p.Addr+"/api/v1/query", q)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Result prommodel.Matrix `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	eval := set.SLOs[0].Evaluation
	out := map[string][]time.Time{}
	for _, s := range body.Data.Result {
		k := string(s.Metric["alertname"]) + "/" + string(s.Metric["severity"]) + "/" + string(s.Metric["model_name"])
		hold := holds[string(s.Metric["alertname"])+"/"+string(s.Metric["severity"])]
		var runStart time.Time
		var prev time.Time
		firedInRun := false
		for _, v := range s.Values {
			ts := v.Timestamp.Time()
			if prev.IsZero() || ts.Sub(prev) > eval {
				runStart, firedInRun = ts, false
			}
			prev = ts
			if !firedInRun && ts.Sub(runStart) >= hold {
				out[k] = append(out[k], ts.UTC())
				firedInRun = true
			}
		}
	}
	for k := range out {
		sort.Slice(out[k], func(i, j int) bool { return out[k][i].Before(out[k][j]) })
		t.Logf("prometheus: %s fired at %v", k, out[k])
	}
	return out
}
