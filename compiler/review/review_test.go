package review_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/internal/bench"
	"github.com/inferslo/inferslo/compiler/render"
	"github.com/inferslo/inferslo/compiler/review"
	"github.com/inferslo/inferslo/compiler/simulate"
	"github.com/inferslo/inferslo/spec"
)

// Drawing each service as its replay ends must give the page one replay of
// every service, with every query's result held at once, gives.
func TestTheStreamedPageEqualsThePageOfOneReplay(t *testing.T) {
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
	opts := simulate.TimelineOptions{Healthy: 6 * time.Hour, Recovery: time.Hour}
	got, err := review.Build(res.Set, review.Options{Timeline: opts})
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
	tl, err := simulate.RunTimeline(res.Set, evaluable, opts)
	if err != nil {
		t.Fatal(err)
	}
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
	alerts := []render.Alert{}
	for _, a := range tl.Alerts {
		alerts = append(alerts, render.Alert{Name: a.Name, Severity: a.Severity, SLO: a.SLO, Service: a.Service, Group: a.Group, From: a.From, To: a.To})
	}
	if len(alerts) == 0 {
		t.Fatal("the burn fired no alert; the pages would not show bands")
	}
	want, err := render.Page(res.Set, out.Files, data, render.Options{Scenario: tl.Describe(), Alerts: alerts})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Page, want) {
		i := 0
		for i < len(got.Page) && i < len(want) && got.Page[i] == want[i] {
			i++
		}
		t.Errorf("the streamed page differs from byte %d on:\n got: %.200s\nwant: %.200s", i, got.Page[i:], want[i:])
	}
}
