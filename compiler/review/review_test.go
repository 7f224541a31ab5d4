package review_test

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/internal/bench"
	"github.com/inferslo/inferslo/compiler/render"
	"github.com/inferslo/inferslo/compiler/review"
	"github.com/inferslo/inferslo/compiler/review/timeline"
	"github.com/inferslo/inferslo/spec"
)

// Drawing each service as its replay ends must give the page one replay of
// every service, with every query's result held at once, gives.
func TestTheStreamedPageEqualsThePageOfOneReplay(t *testing.T) {
	t.Parallel()
	res, err := spec.Parse(bench.Fleet(4)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(res.Set.Services()); n < 2 {
		t.Fatalf("the fleet has %d services, want several", n)
	}
	opts := timeline.TimelineOptions{Healthy: 2 * time.Hour, Recovery: time.Hour}
	// The load ramps are replays of their own, drawn after the dashboards.
	got, err := review.Build(res.Set, review.Options{Timeline: opts, SkipRamps: true})
	if err != nil {
		t.Fatal(err)
	}

	out, err := compiler.Compile(res.Set, compiler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	queries, err := render.Queries(out.Files)
	if err != nil {
		t.Fatal(err)
	}
	evaluable := make([]string, len(queries))
	for i, q := range queries {
		evaluable[i] = render.Evaluable(q, 2*time.Minute)
	}
	tls := make([]timeline.Timeline, len(res.Set.Services()))
	err = timeline.RunServiceTimelines(res.Set, func(string) []string { return evaluable }, opts, func(i int, _ string, tl timeline.Timeline) error {
		tls[i] = tl
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tl := timeline.Merge(tls)
	data := map[string][]render.Series{}
	for i, q := range queries {
		for _, s := range tl.Series[evaluable[i]] {
			var pts []render.Point
			for _, p := range s.Points {
				pts = append(pts, render.Point{Time: p.T, Value: p.V})
			}
			data[q] = append(data[q], render.Series{Labels: s.Labels, Points: pts})
		}
	}
	data = review.AsSpent(data, review.RollingWindows(res.Set), tl.From)
	alerts := []render.Alert{}
	for _, a := range tl.Alerts {
		alerts = append(alerts, render.Alert{Name: a.Name, Severity: a.Severity, SLO: a.SLO, Service: a.Service, Group: a.Group, From: a.From, To: a.To})
	}
	if len(alerts) == 0 {
		t.Fatal("the burn fired no alert; the pages would not show bands")
	}
	// The whole page in one go: every dashboard drawn over all the data.
	r, err := render.NewReview(res.Set, out.Files, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range res.Set.PerService() {
		r.Draw(svc.Name, data, alerts)
	}
	r.Draw("", data, alerts)
	want := r.Page(tl.Describe() + " " + review.SpentNote)
	if !bytes.Equal(got.Page, want) {
		i := 0
		for i < len(got.Page) && i < len(want) && got.Page[i] == want[i] {
			i++
		}
		t.Errorf("the streamed page differs from byte %d on:\n got: %.200s\nwant: %.200s", i, got.Page[i:], want[i:])
	}
}

func TestBudgetsAreDrawnAsSpentDuringTheReplay(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	windows := map[string]time.Duration{"chat-errors": 28 * 24 * time.Hour}
	series := func(slo string, at time.Duration, v float64) []render.Series {
		return []render.Series{{Labels: map[string]string{"slo": slo}, Points: []render.Point{{Time: start.Add(at), Value: v}}}}
	}
	cases := []struct {
		name, query, slo string
		at               time.Duration
		remaining, want  float64
	}{
		{"a day at half the budget rate spends a 56th of a 4w budget, not half", `inferslo:error_budget_remaining:ratio{slo="chat-errors"}`, "chat-errors", 24 * time.Hour, 0.5, 1 - 0.5/28},
		{"once the replay fills the window the recording is the spend", `inferslo:error_budget_remaining:ratio{slo="chat-errors"}`, "chat-errors", 28 * 24 * time.Hour, 0.5, 0.5},
		{"the replay's first instant has spent nothing", `inferslo:error_budget_remaining:ratio{slo="chat-errors"}`, "chat-errors", 0, -3, 1},
		{"a calendar SLO's budget is left as recorded", `inferslo:error_budget_remaining:ratio{slo="monthly"}`, "monthly", 24 * time.Hour, 0.5, 0.5},
		{"other queries are left alone", `slo:burn_rate{slo="chat-errors"}`, "chat-errors", 24 * time.Hour, 0.5, 0.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := review.AsSpent(map[string][]render.Series{c.query: series(c.slo, c.at, c.remaining)}, windows, start)
			if v := got[c.query][0].Points[0].Value; math.Abs(v-c.want) > 1e-12 {
				t.Errorf("got %v, want %v", v, c.want)
			}
		})
	}
}
