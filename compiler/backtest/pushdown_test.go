package backtest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/internal/promapi"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/spec"
)

// shortHistory is newHistory's two incidents in four days: a fast burn
// on model-a and a slow one on model-b.
func shortHistory() history {
	h := newHistory()
	h.days = 4
	h.fast = [2]time.Time{h.start.Add(36 * time.Hour), h.start.Add(37 * time.Hour)}
	h.slow = [2]time.Time{h.start.Add(2 * 24 * time.Hour), h.start.Add(3*24*time.Hour + 12*time.Hour)}
	return h
}

// serveHistory starts an in-process Prometheus API holding h.
func serveHistory(t testing.TB, h history) *promapi.Server {
	return serve(t, func(add func(labels.Labels, time.Time, float64)) {
		h.each(func(m string, pod int, reason string, ts time.Time, v float64) {
			add(labels.FromStrings("__name__", "vllm:request_success_total", "namespace", "llm", "model_name", m,
				"pod", fmt.Sprintf("pod-%d", pod), "finished_reason", reason), ts, v)
		})
	})
}

// serve starts an in-process Prometheus API holding the samples fill adds.
func serve(tb testing.TB, fill func(add func(labels.Labels, time.Time, float64))) *promapi.Server {
	tb.Helper()
	rp, err := prom.NewReplay(nil, nil, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(rp.Close)
	app := rp.Appender(context.Background())
	n := 0
	fill(func(lset labels.Labels, ts time.Time, v float64) {
		if _, err := app.Append(0, lset, ts.UnixMilli(), v); err != nil {
			tb.Fatal(err)
		}
		// One commit per million samples bounds what the appender holds.
		if n++; n%1_000_000 == 0 {
			if err := app.Commit(); err != nil {
				tb.Fatal(err)
			}
			app = rp.Appender(context.Background())
		}
	})
	if err := app.Commit(); err != nil {
		tb.Fatal(err)
	}
	srv := promapi.Serve(rp)
	tb.Cleanup(srv.Close)
	return srv
}

// TestTheServersAnswersReplayAsTheRawSeriesDo backtests the same history
// twice: once the server evaluating every part of the rules that reads raw
// series, once reading the raw series and evaluating here. The alerts (fire
// and resolve times), the SLIs and the budgets spent are equal, and the
// server's way reads a fraction of the samples.
func TestTheServersAnswersReplayAsTheRawSeriesDo(t *testing.T) {
	t.Parallel()
	h := shortHistory()
	srv := serveHistory(t, h)
	res, err := spec.Parse(spec.Source{Name: "fleet.yaml", Data: []byte(fleetSpec)})
	if err != nil || len(res.Set.SLOs) != 1 {
		t.Fatalf("spec: %v %v", err, res.Problems)
	}
	from := h.start.Add(12 * time.Hour)
	run := func(read Read) *Report {
		rep, err := Run(context.Background(), res.Set, Options{Source: Source{URL: srv.URL}, From: from, To: h.end(), Read: read, Scratch: t.TempDir()})
		if err != nil {
			t.Fatalf("read %s: %v", read, err)
		}
		t.Logf("read %s: %d requests, %d bytes, %d series, %d samples; evaluated from %s", read, rep.Stats.Requests, rep.Stats.BytesRead, rep.Stats.Series, rep.Stats.Samples, rep.Evaluated.Format(time.RFC3339))
		return rep
	}
	server, raw := run(ReadServer), run(ReadRaw)
	findsTheKnownIncidents(t, h, server)
	if got, want := alertLines(server), alertLines(raw); got != want {
		t.Errorf("alerts differ:\nserver:\n%s\nraw:\n%s", got, want)
	}
	if len(server.SLOs) != len(raw.SLOs) || len(server.SLOs) != 2 {
		t.Fatalf("%d SLO groups read from the server's answers, %d from raw series; want 2 each", len(server.SLOs), len(raw.SLOs))
	}
	for i, s := range server.SLOs {
		r := raw.SLOs[i]
		if s.SLI == nil || r.SLI == nil || !near(*s.SLI, *r.SLI) || !near(*s.BudgetSpent, *r.BudgetSpent) {
			t.Errorf("%v: sli %v and budget spent %v from the server's answers; %v and %v from raw series", s.Labels, s.SLI, s.BudgetSpent, r.SLI, r.BudgetSpent)
		}
	}
	if server.Stats.Samples*4 > raw.Stats.Samples {
		t.Errorf("the server's answers are %d samples, raw series %d: want under a quarter", server.Stats.Samples, raw.Stats.Samples)
	}
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// alertLines prints alerts one a line, for comparing runs.
func alertLines(rep *Report) string {
	var b strings.Builder
	for _, a := range rep.Alerts {
		resolved := "never"
		if a.ResolvedAt != nil {
			resolved = a.ResolvedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(&b, "%s %s %s fired %s resolved %s\n", a.AlertName, a.Severity, labels.FromMap(a.Labels), a.FiredAt.Format(time.RFC3339), resolved)
	}
	return b.String()
}

// TestPartsMoveToTheServerOnlyWhereTheyReadRawSeries rewrites rules as a
// server-read backtest does: each largest part reading raw series only, at
// the rule's own evaluation times, becomes a series; recordings, subqueries
// and ranges stay.
func TestPartsMoveToTheServerOnlyWhereTheyReadRawSeries(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, expr, want string }{
		{"a recording of raw rates moves whole",
			`sum by (m) (rate(x_total[5m]))`, `P0`},
		{"a ratio of a recording to raw rates moves the raw side",
			`rec:ratio{window="1h"} > on (m) (sum by (m) (rate(x_total[5m])) / 2)`, `rec:ratio{window="1h"} > on (m) P0`},
		{"a subquery over raw series moves with the function around it",
			`max_over_time(sum(rate(x_total[1m]))[1h:1m])`, `P0`},
		{"a subquery mixing a recording keeps its raw series",
			`max_over_time((sum(rate(x_total[1m])) / rec:ratio)[1h:1m])`, `max_over_time((sum(rate(x_total[1m])) / rec:ratio)[1h:1m])`},
		{"a bare selector keeps its name, so it stays",
			`x_gauge > 3`, `x_gauge > 3`},
		{"absent moves",
			`absent(x_total{job="a"}) == 1`, `P0`},
		{"the alerts' series stay",
			`ALERTS{alertstate="firing"} and on () (sum(rate(x_total[5m])) > 0)`, `ALERTS{alertstate="firing"} and on () P0`},
		{"two equal parts are one",
			`sum(rate(x_total[5m])) * rec:ratio / sum(rate(x_total[5m]))`, `P0 * rec:ratio / P0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := query.NewParser().ParseExpr(c.expr)
			if err != nil {
				t.Fatal(err)
			}
			ps := newParts(map[string]bool{"rec:ratio": true})
			got, err := ps.rewrite(time.Minute, e)
			if err != nil {
				t.Fatal(err)
			}
			s := got.String()
			for i, p := range ps.list {
				s = strings.ReplaceAll(s, p.name, fmt.Sprintf("P%d", i))
			}
			if s != c.want {
				t.Errorf("got %s, want %s", s, c.want)
			}
		})
	}
}
