package rules

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
)

// TestPeriodBoundsInPromQLMatchTheCalendar evaluates the generated period
// start and end in the PromQL engine around month, quarter, leap-day and
// week boundaries, in UTC and in fixed offsets east and west of it.
func TestPeriodBoundsInPromQLMatchTheCalendar(t *testing.T) {
	monday := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	cals := []struct {
		name string
		cal  model.Calendar
	}{
		{"a month in UTC", model.Calendar{Unit: "M", Count: 1}},
		{"a month at UTC+5:30", model.Calendar{Unit: "M", Count: 1, Offset: 5*3600 + 1800}},
		{"a month at UTC-8", model.Calendar{Unit: "M", Count: 1, Offset: -8 * 3600}},
		{"a quarter in UTC", model.Calendar{Unit: "Q", Count: 1}},
		{"a quarter at UTC+2", model.Calendar{Unit: "Q", Count: 1, Offset: 2 * 3600}},
		{"a quarter at UTC-5", model.Calendar{Unit: "Q", Count: 1, Offset: -5 * 3600}},
		{"a week from a Monday", model.Calendar{Unit: "w", Count: 1, Anchor: monday}},
		{"two weeks from a Monday at UTC+1", model.Calendar{Unit: "w", Count: 2, Anchor: monday.Add(-time.Hour)}},
		{"a day", model.Calendar{Unit: "d", Count: 1, Anchor: monday}},
	}
	var times []time.Time
	for _, y := range []int{2023, 2024, 2026} {
		for m := time.January; m <= time.December; m++ {
			b := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
			for _, d := range []time.Duration{-12 * time.Hour, -8*time.Hour - time.Second, -5*time.Hour - 30*time.Minute, -time.Second, 0, time.Second, 2 * time.Hour, 7*time.Hour + 59*time.Minute, 15 * 24 * time.Hour} {
				times = append(times, b.Add(d))
			}
		}
	}
	times = append(times, time.Date(2024, 2, 29, 23, 59, 0, 0, time.UTC), time.Date(2023, 12, 31, 23, 59, 59, 0, time.UTC), monday.Add(-time.Minute))
	ll, err := promqltest.NewLazyLoader("load 1m\n  x 0", promqltest.LazyLoaderOpts{EnableAtModifier: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ll.Close()
	for _, c := range cals {
		t.Run(c.name, func(t *testing.T) {
			start, end := periodBounds(c.cal)
			for _, at := range times {
				wantStart, wantEnd := c.cal.Bounds(at)
				for _, q := range []struct {
					expr string
					want time.Time
				}{{start, wantStart}, {end, wantEnd}} {
					got := instant(t, ll, q.expr, at)
					if got != float64(q.want.Unix()) {
						t.Fatalf("at %s: %s = %s, want %s", at, q.expr, time.Unix(int64(got), 0).UTC(), q.want)
					}
				}
			}
		})
	}
}

func instant(t *testing.T, ll *promqltest.LazyLoader, expr string, at time.Time) float64 {
	t.Helper()
	q, err := ll.QueryEngine().NewInstantQuery(context.Background(), ll.Storage(), nil, expr, at)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	defer q.Close()
	res := q.Exec(context.Background())
	if res.Err != nil {
		t.Fatalf("%s: %v", expr, res.Err)
	}
	v, ok := res.Value.(promql.Vector)
	if !ok || len(v) != 1 {
		return math.NaN()
	}
	return v[0].F
}

// TestACalendarPeriodSLOResetsAtItsBoundary replays traffic across
// January 31 to February 1 through the Prometheus rule engine. January ends
// at a 5% error ratio; February starts busy and clean for two hours, then
// turns quiet and bad, so a time average of ratios would be ten times the
// count-weighted truth. The period SLI must equal the count-weighted truth of the month so
// far within 0.1%, and the budget must start afresh at the boundary.
//
// A quarter does the same from March 31 to April 1, within promtool's
// 10,000 samples per query (evaluateSet's cap), also at UTC+5:45, whose
// boundary falls on a quarter hour.
func TestACalendarPeriodSLOResetsAtItsBoundary(t *testing.T) {
	for _, c := range []struct {
		unit   string
		month  time.Month
		offset int
		days   int // the period's length
	}{
		{"M", time.February, 3600, 28},
		{"Q", time.April, 0, 91},
		{"Q", time.April, 5*3600 + 45*60, 91},
	} {
		unit, offset := c.unit, c.offset
		t.Run(fmt.Sprintf("a %s period at UTC offset %ds", unit, offset), func(t *testing.T) {
			t.Parallel()
			boundary := time.Date(1970, c.month, 1, 0, 0, 0, 0, time.UTC).Add(-time.Duration(offset) * time.Second)
			dataStart := boundary.Add(-3 * time.Hour)
			// Requests and failures per minute, by phase.
			phase := func(at time.Time) (total, bad float64) {
				switch {
				case at.Before(boundary):
					return 600, 30
				case at.Before(boundary.Add(2 * time.Hour)):
					return 3000, 3
				}
				return 120, 12
			}
			var good, failed []float64
			var g, f float64
			counts := map[time.Time][2]float64{}
			for at := dataStart; !at.After(boundary.Add(4 * time.Hour)); at = at.Add(time.Minute) {
				if at.After(dataStart) {
					tot, bad := phase(at.Add(-time.Minute))
					g += tot - bad
					f += bad
				}
				good, failed = append(good, g), append(failed, f)
				counts[at] = [2]float64{g + f, f}
			}
			skip := int(dataStart.Sub(time.Unix(0, 0)) / time.Minute)
			series := fmt.Sprintf("req_total{code=\"200\"} _x%d %s\nreq_total{code=\"500\"} _x%d %s", skip, join(good), skip, join(failed))

			tiers, err := model.WorkbookTiersOf(model.Severities, 30*24*time.Hour, 2*time.Minute, 5*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Objective: model.NewDecimal(99, 100),
				SLI:    model.SLI{Counter: true, Total: &model.Query{Expr: "sum(req_total)"}, Bad: &model.Query{Expr: `sum(req_total{code="500"})`}},
				Window: 30 * 24 * time.Hour, Calendar: &model.Calendar{Unit: unit, Count: 1, Offset: offset},
				Evaluation: 5 * time.Minute, ScrapeInterval: 15 * time.Second, Alerting: model.Alerting{Tiers: tiers}}
			ll, _ := evaluateFrom(t, slo, series, dataStart, boundary.Add(4*time.Hour))

			// truth is the count-weighted error ratio from the later of the
			// period start and the data start.
			truth := func(at time.Time) float64 {
				from := dataStart
				if !at.Before(boundary) {
					from = boundary
				}
				return (counts[at][1] - counts[from][1]) / (counts[at][0] - counts[from][0])
			}
			ratio := `inferslo:sli_error:ratio{slo="s",window="1` + unit + `"}`
			budget := `inferslo:error_budget_remaining:ratio{slo="s"}`
			for _, at := range []time.Time{boundary.Add(-5 * time.Minute), boundary.Add(30 * time.Minute), boundary.Add(2 * time.Hour), boundary.Add(4 * time.Hour)} {
				got, want := instant(t, ll, ratio, at), truth(at)
				if math.Abs(got-want) > 0.001*want {
					t.Errorf("period error ratio at %s = %v, want the count-weighted %v (within 0.1%%)", at, got, want)
				}
				if b := instant(t, ll, budget, at); math.Abs(b-(1-want/0.01)) > 0.001*math.Abs(1-want/0.01)+1e-9 {
					t.Errorf("budget remaining at %s = %v, want %v", at, b, 1-want/0.01)
				}
			}
			if got := instant(t, ll, ratio, boundary); !math.IsNaN(got) {
				t.Errorf("at the boundary the period has no events yet, but its error ratio is %v", got)
			}
			before, after := instant(t, ll, budget, boundary.Add(-5*time.Minute)), instant(t, ll, budget, boundary.Add(30*time.Minute))
			if !(before < -3 && after > 0.8) {
				t.Errorf("budget %v before the boundary and %v after, want an overspent period and a fresh one", before, after)
			}
			at := boundary.Add(4 * time.Hour)
			left := instant(t, ll, `inferslo:period_end:timestamp{slo="s"}`, at) - float64(at.Unix())
			if want := (time.Duration(c.days)*24*time.Hour - 4*time.Hour).Seconds(); left != want {
				t.Errorf("period left at %s = %vs, want %vs", at, left, want)
			}
		})
	}
}

func join(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, " ")
}

// evaluateFrom loads series and evaluates the SLO's rule group at its
// evaluation interval over [from, until], failing on any rule error.
func evaluateFrom(t *testing.T, slo model.SLO, series string, from, until time.Time) (*promqltest.LazyLoader, map[string]*rules.Group) {
	t.Helper()
	return evaluateSet(t, model.Set{SLOs: []model.SLO{slo}}, series, from, until)
}

// evaluateSet is evaluateFrom for the rule file of one service's SLOs,
// evaluated at the first SLO's interval.
func evaluateSet(t *testing.T, set model.Set, series string, from, until time.Time) (*promqltest.LazyLoader, map[string]*rules.Group) {
	t.Helper()
	slo := set.SLOs[0]
	files, err := Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, files[0].Data, 0o644); err != nil {
		t.Fatal(err)
	}
	ll, err := promqltest.NewLazyLoader("load 1m\n"+indent(series), promqltest.LazyLoaderOpts{EnableAtModifier: true, EnableNegativeOffset: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ll.Close() })
	// promtool's cap of samples per query, so that every rule evaluated
	// here also evaluates in the tests compile --tests writes.
	engine := promql.NewEngine(promql.EngineOpts{Logger: promslog.NewNopLogger(), MaxSamples: promqltest.DefaultMaxSamplesPerQuery, Timeout: time.Hour, EnableAtModifier: true})
	m := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:  rules.EngineQueryFunc(engine, ll.Storage()),
		Appendable: ll.Storage(),
		Queryable:  ll.Storage(),
		Context:    context.Background(),
		NotifyFunc: func(context.Context, string, ...*rules.Alert) {},
		Logger:     promslog.NewNopLogger(),
		Parser:     parser.NewParser(parser.Options{}),
	})
	groups, errs := m.LoadGroups(slo.Evaluation, labels.EmptyLabels(), "", nil, false, path)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for ts := from; !ts.After(until); ts = ts.Add(slo.Evaluation) {
		ll.WithSamplesTill(ts, func(err error) {
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range groups {
				g.Eval(context.Background(), ts)
				for _, r := range g.Rules() {
					if err := r.LastError(); err != nil {
						t.Fatalf("rule %s at %s: %v", r.Name(), ts, err)
					}
				}
			}
		})
	}
	return ll, groups
}
