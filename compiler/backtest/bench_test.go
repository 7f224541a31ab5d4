package backtest

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/internal/bench"
	"github.com/inferslo/inferslo/compiler/internal/promapi"
	"github.com/inferslo/inferslo/spec"
)

// benchSpec is the bench fleet's errors SLO: vLLM, one budget per model,
// at the CI test's cadence (2m scrapes, 4m evaluations).
const benchSpec = `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata:
  name: assist
spec:
  engine: vllm
  selector: {namespace: llm}
  groupBy: [model_name]
  window: 28d
  scrapeInterval: 2m
  evaluationInterval: 4m
  objectives:
    - {sli: errors, target: 99.9%}
`

// fleetServer answers the Prometheus API for a fleet of pods × models
// vLLM request counters over days, generated on the fly: the server costs
// no memory, so the benchmark measures the backtest's.
func fleetServer(pods, models int, from time.Time) *httptest.Server {
	all := fleetSeries(pods, models)
	matching := func(sel string) []labels.Labels {
		ms, err := query.NewParser().ParseMetricSelector(sel)
		if err != nil {
			return nil
		}
		var out []labels.Labels
		for _, l := range all {
			ok := true
			for _, m := range ms {
				ok = ok && m.Matches(l.Get(m.Name))
			}
			if ok {
				out = append(out, l)
			}
		}
		return out
	}
	seconds := func(r *http.Request, k string) float64 {
		v, _ := strconv.ParseFloat(r.FormValue(k), 64)
		return v
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := bufio.NewWriterSize(w, 1<<16)
		defer bw.Flush()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/series":
			fmt.Fprint(bw, `{"status":"success","data":[`)
			for i, l := range matching(r.FormValue("match[]")) {
				if i > 0 {
					bw.WriteByte(',')
				}
				fmt.Fprintf(bw, `{"__name__":%q}`, l.Get("__name__"))
			}
			fmt.Fprint(bw, `]}`)
		case "/api/v1/query_range":
			start, end, step := seconds(r, "start"), seconds(r, "end"), seconds(r, "step")
			fmt.Fprint(bw, `{"status":"success","data":{"resultType":"matrix","result":[`)
			for i, l := range matching(r.FormValue("query")) {
				if i > 0 {
					bw.WriteByte(',')
				}
				fmt.Fprint(bw, `{"metric":{`)
				j := 0
				l.Range(func(x labels.Label) {
					if j > 0 {
						bw.WriteByte(',')
					}
					j++
					fmt.Fprintf(bw, "%q:%q", x.Name, x.Value)
				})
				fmt.Fprint(bw, `},"values":[`)
				for t := start; t <= end; t += step {
					if t > start {
						bw.WriteByte(',')
					}
					fmt.Fprintf(bw, `[%s,"%g"]`, strconv.FormatFloat(t, 'f', -1, 64), fleetValue(l, t-float64(from.Unix())))
				}
				fmt.Fprint(bw, `]}`)
			}
			fmt.Fprint(bw, `]}}`)
		default:
			http.NotFound(w, r)
		}
	}))
}

// BenchmarkBacktestFleet backtests the bench fleet (200 pods × 4 models,
// an errors SLO per model) over 30 days: reading raw series at the 2m
// scrape step from a generated server (read=raw), and having an in-process
// Prometheus engine over the same history answer the rules' parts
// (read=server; its CPU and memory, the server's evaluation included, are
// counted here too). Time, CPU, peak heap, and the bytes and samples read.
func BenchmarkBacktestFleet(b *testing.B) {
	res, err := spec.Parse(spec.Source{Name: "assist.yaml", Data: []byte(benchSpec)})
	if err != nil || len(res.Set.SLOs) != 1 {
		b.Fatalf("spec: %v %v", err, res.Problems)
	}
	for _, c := range []struct {
		pods, days int
		read       Read
	}{{20, 30, ReadRaw}, {200, 30, ReadRaw}, {20, 30, ReadServer}, {200, 30, ReadServer}} {
		b.Run(fmt.Sprintf("pods=%d/models=4/days=%d/read=%s", c.pods, c.days, c.read), func(b *testing.B) {
			to := time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)
			from := to.Add(-time.Duration(c.days) * 24 * time.Hour)
			origin := from.Add(-7 * 24 * time.Hour)
			url := ""
			if c.read == ReadRaw {
				srv := fleetServer(c.pods, 4, origin)
				defer srv.Close()
				url = srv.URL
			} else {
				url = fleetEngine(b, c.pods, 4, origin, to).URL
			}
			var st Stats
			bench.Measure(b, 1, func(int) {
				rep, err := Run(context.Background(), res.Set, Options{Source: Source{URL: url}, From: from, To: to, Read: c.read})
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.Alerts) != 0 || len(rep.SLOs) != 4 {
					b.Fatalf("healthy fleet: %d alerts, %d SLO groups", len(rep.Alerts), len(rep.SLOs))
				}
				st = rep.Stats
			})
			b.ReportMetric(float64(st.BytesRead)/1e6, "MB-read")
			b.ReportMetric(float64(st.Samples), "samples")
			b.ReportMetric(float64(st.Requests), "requests")
			b.ReportMetric(st.Read.Seconds(), "read-s")
			b.ReportMetric(st.Replayed.Seconds(), "replay-s")
		})
	}
}

// fleetEngine serves the bench fleet's history, fleetServer's counters
// at 2m scrapes from origin to to, from an in-process Prometheus.
func fleetEngine(b *testing.B, pods, models int, origin, to time.Time) *promapi.Server {
	return serve(b, func(add func(labels.Labels, time.Time, float64)) {
		for _, l := range fleetSeries(pods, models) {
			for t := origin; !t.After(to); t = t.Add(2 * time.Minute) {
				add(l, t, fleetValue(l, t.Sub(origin).Seconds()))
			}
		}
	})
}

// fleetSeries are the bench fleet's request counters: per model and pod,
// finished and failed.
func fleetSeries(pods, models int) []labels.Labels {
	var all []labels.Labels
	for m := 0; m < models; m++ {
		for p := 0; p < pods; p++ {
			for _, reason := range []string{"stop", "error"} {
				all = append(all, labels.FromStrings("__name__", "vllm:request_success_total", "namespace", "llm",
					"model_name", fmt.Sprintf("model-%d", m), "pod", fmt.Sprintf("pod-%d", p), "finished_reason", reason))
			}
		}
	}
	return all
}

// fleetValue is a counter's value seconds after the fleet started: 5
// requests per second per pod, 0.05% failing.
func fleetValue(l labels.Labels, seconds float64) float64 {
	share := 0.9995
	if l.Get("finished_reason") == "error" {
		share = 0.0005
	}
	return math.Floor(5 * share * seconds)
}
