package backtest

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/spec"
)

// TestTheTimelineEndsAtTheReportedBudgetSpent: buckets are even, at most
// maxBuckets, skip stretches without events, and their running spend
// ends at the figure the report gives for the whole range.
func TestTheTimelineEndsAtTheReportedBudgetSpent(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var samples []*sample
	for i := 0; i < 3*24*60; i++ {
		if i >= 24*60 && i < 25*60 {
			continue // an hour without traffic
		}
		k := 0.01
		if i >= 40*60 && i < 41*60 {
			k = 2 // a burn: 20% failed
		}
		samples = append(samples, &sample{t: t0.Add(time.Duration(i) * time.Minute).UnixMilli(), n: 10, k: k})
	}
	from, to := t0, t0.Add(72*time.Hour)
	budget, window := 0.01, 28*24*time.Hour
	tl := timeline(samples, from, to, budget, window)
	if len(tl) == 0 || len(tl) > maxBuckets {
		t.Fatalf("%d buckets, want 1 to %d", len(tl), maxBuckets)
	}
	size := tl[0].To.Sub(tl[0].From)
	if size != 15*time.Minute {
		t.Errorf("buckets of %s over 3 days, want 15m (the first size giving at most %d)", size, maxBuckets)
	}
	if len(tl) != 72*4-4 {
		t.Errorf("%d buckets, want %d: the hour without traffic is left out", len(tl), 72*4-4)
	}
	n, k := sums(samples, from, to)
	want := k / n / budget * float64(to.Sub(from)) / float64(window)
	if got := tl[len(tl)-1].Spent; math.Abs(got-want) > 1e-12 {
		t.Errorf("spent by the end %g, the report's budget spent %g", got, want)
	}
	for i, b := range tl {
		if i > 0 && b.Spent < tl[i-1].Spent {
			t.Fatalf("spend falls at %s", b.From)
		}
		if b.From.Equal(t0.Add(40*time.Hour)) && math.Abs(b.ErrorRatio-0.2) > 1e-12 {
			t.Errorf("the burn's bucket has error ratio %g, want 0.2", b.ErrorRatio)
		}
	}
}

// TestTheHTMLReportShadesEachGroupsAlertsOverItsCharts: one section per
// SLO group, its own alerts shaded on its budget and burn charts and no
// other group's, the tiers' factors drawn, the source's credentials not
// printed.
func TestTheHTMLReportShadesEachGroupsAlertsOverItsCharts(t *testing.T) {
	t.Parallel()
	res, err := spec.Parse(spec.Source{Name: "fleet.yaml", Data: []byte(fleetSpec)})
	if err != nil || len(res.Set.SLOs) != 1 {
		t.Fatalf("spec: %v %v", err, res.Problems)
	}
	slo := res.Set.SLOs[0]
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(7 * 24 * time.Hour)
	var samples []*sample
	for i := 0; i < 7*24*60; i += 4 {
		k := 0.005
		if i >= 3*24*60 && i < 3*24*60+60 {
			k = 2
		}
		samples = append(samples, &sample{t: from.Add(time.Duration(i) * time.Minute).UnixMilli(), n: 10, k: k})
	}
	group := func(model string) SLOReport {
		sli, spent := 0.999, 0.1
		return SLOReport{SLO: slo.Name, Labels: map[string]string{"model_name": model}, SLI: &sli, BudgetSpent: &spent,
			Timeline: timeline(samples, from, to, slo.ErrorBudget().Float(), slo.Window)}
	}
	resolved := from.Add(3*24*time.Hour + 50*time.Minute)
	rep := &Report{From: from, To: to, SLOs: []SLOReport{group("model-a"), group("model-b")},
		Alerts: []Alert{{SLO: slo.Name, AlertName: "ErrorBudgetBurn", Severity: "page", Labels: map[string]string{"model_name": "model-a", "slo": slo.Name},
			FiredAt: from.Add(3*24*time.Hour + 20*time.Minute), ResolvedAt: &resolved}}}
	for i, g := range rep.SLOs {
		if lo, hi, ok := zoomSpan(rep.Alerts, g, from, to); ok {
			rep.SLOs[i].Zoom = timeline(samples, lo, hi, slo.ErrorBudget().Float(), slo.Window)
		}
	}
	if rep.SLOs[0].Zoom == nil || rep.SLOs[1].Zoom != nil {
		t.Fatalf("zoomed buckets: model-a %d, model-b %d; want model-a's page only", len(rep.SLOs[0].Zoom), len(rep.SLOs[1].Zoom))
	}
	b, err := rep.HTML(res.Set, "http://user:secret@prometheus:9090/?token=hush")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	a, z, bb := strings.Index(page, `id="dashboard-slo-0"`), strings.Index(page, `id="dashboard-slo-0-page"`), strings.Index(page, `id="dashboard-slo-1"`)
	if a < 0 || z < a || bb < z {
		t.Fatalf("sections at %d, %d and %d", a, z, bb)
	}
	secA, zoom, secB := page[a:z], page[z:bb], page[bb:]
	// The 30-minute page is a sliver of the week and a good part of the
	// 8h30m zoomed around it.
	width := func(sec string) float64 {
		m := regexp.MustCompile(`class="band band-page" x="[^"]*" y="[^"]*" width="([^"]*)"`).FindStringSubmatch(sec)
		if m == nil {
			t.Fatalf("no page band in %.200s", sec)
		}
		w, _ := strconv.ParseFloat(m[1], 64)
		return w
	}
	if w, zw := width(secA), width(zoom); zw < 10*w {
		t.Errorf("page band %v wide zoomed, %v over the week", zw, w)
	}
	if !strings.Contains(zoom, "Mar 3 18:20 to Mar 4 02:50") {
		t.Errorf("the zoomed section does not say its stretch: %.400s", zoom)
	}
	if !strings.Contains(secA, "model_name=model-a") || !strings.Contains(secB, "model_name=model-b") {
		t.Error("the sections do not name their groups")
	}
	if n := strings.Count(secA, `class="band band-page"`); n != 2 {
		t.Errorf("model-a: %d page bands, want one on each of its 2 charts", n)
	}
	if strings.Contains(secB, `class="band `) {
		t.Error("model-a's page is shaded on model-b")
	}
	for _, tier := range slo.Alerting.Tiers {
		for _, w := range tier.Windows {
			if !regexp.MustCompile(`<title>threshold ` + regexp.QuoteMeta(w.Factor.String()) + `</title>`).MatchString(secA) {
				t.Errorf("the %s tier's factor %s is not drawn", tier.Severity, w.Factor)
			}
		}
	}
	if !strings.Contains(secA, "alerts fired: page × 1") || !strings.Contains(secB, "no alert fired") {
		t.Error("the sections do not count their alerts")
	}
	if strings.Contains(page, "secret") || strings.Contains(page, "hush") || !strings.Contains(page, "prometheus:9090/") {
		t.Error("the page does not name the server without its credentials")
	}
	if strings.Contains(page, "<script") {
		t.Error("the report runs a script")
	}
}
