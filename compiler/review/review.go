// Package review builds the page of `inferslo render`: it compiles the set,
// replays the review scenario service by service and draws each service's
// dashboard as soon as its replay ends, so memory holds the replays in
// flight and the overview's series, not every query's result at once.
package review

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/render"
	"github.com/inferslo/inferslo/compiler/review/timeline"
	"github.com/inferslo/inferslo/templates"
)

// Options shape the review.
type Options struct {
	// Text words alert annotations and panel descriptions; nil: the
	// built-in templates.
	Text *templates.Text
	// RateInterval stands in for Grafana's $__rate_interval; default two
	// minutes, four scrapes of 30s, a window every rate() has samples for.
	RateInterval time.Duration
	// Timeline shapes the replayed scenario.
	Timeline timeline.TimelineOptions
	// SkipRamps leaves out the load-ramp views of TTFT SLOs with the
	// queue-backlog warning and capacity facts (a replay of their own,
	// seconds each).
	SkipRamps bool
}

// Result is the page and what the command reports beside it.
type Result struct {
	Page []byte
	// Skipped lists SLOs that could not be replayed, with the reason.
	Skipped []string
	// Queries counts the distinct panel queries drawn.
	Queries int
	// Replayed is how much simulated traffic the page shows.
	Replayed time.Duration
}

// Build compiles set, replays it and draws the review page.
func Build(set model.Set, opts Options) (Result, error) {
	opts.RateInterval = cmp.Or(opts.RateInterval, 2*time.Minute)
	out, err := compiler.Compile(set, compiler.Options{Text: opts.Text})
	if err != nil {
		return Result{}, err
	}
	var res Result
	queries, err := render.Queries(out.Files)
	if err != nil {
		return res, err
	}
	res.Queries = len(queries)
	page, err := render.NewReview(set, out.Files, "")
	if err != nil {
		return res, err
	}
	// The timeline evaluates plain PromQL; the page looks results up by the
	// dashboards' own query text.
	evaluable := func(qs []string) []string {
		out := make([]string, len(qs))
		for i, q := range qs {
			out[i] = render.Evaluable(q, opts.RateInterval)
		}
		return out
	}
	overview := page.Queries("")
	overviewEval := evaluable(overview)
	// Each service keeps, once its dashboard is drawn, only its overview
	// series, alerts and burn; they are merged in service order as one
	// replay over every service would have them.
	windows := RollingWindows(set)
	kept := make([]timeline.Timeline, len(set.Services()))
	err = timeline.RunServiceTimelines(set, func(svc string) []string {
		return append(evaluable(page.Queries(svc)), overviewEval...)
	}, opts.Timeline, func(i int, svc string, tl timeline.Timeline) error {
		own := page.Queries(svc)
		page.Draw(svc, AsSpent(data(own, evaluable(own), tl.Series), windows, tl.From), alerts(tl.Alerts))
		series := map[string][]timeline.TimeSeries{}
		for _, q := range overviewEval {
			if ss, ok := tl.Series[q]; ok {
				series[q] = ss
			}
		}
		tl.Series = series
		kept[i] = tl
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("replay the review scenario: %w", err)
	}
	all := timeline.Merge(kept)
	page.Draw("", AsSpent(data(overview, overviewEval, all.Series), windows, all.From), alerts(all.Alerts))
	var skipped []string
	if !opts.SkipRamps {
		if skipped, err = addRamps(page, set, out.Files, opts.Timeline.Scratch); err != nil {
			return res, err
		}
	}
	res.Page, res.Skipped, res.Replayed = page.Page(all.Describe()+" "+SpentNote), append(all.Skipped, skipped...), all.To.Sub(all.From)
	return res, nil
}

// data keys each query's replayed series by the dashboard's query text.
func data(queries, evaluable []string, series map[string][]timeline.TimeSeries) map[string][]render.Series {
	out := make(map[string][]render.Series, len(queries))
	for i, q := range queries {
		for _, s := range series[evaluable[i]] {
			pts := make([]render.Point, len(s.Points))
			for j, p := range s.Points {
				pts[j] = render.Point{Time: p.T, Value: p.V}
			}
			out[q] = append(out[q], render.Series{Labels: s.Labels, Points: pts})
		}
	}
	return out
}

func alerts(in []timeline.AlertInterval) []render.Alert {
	out := []render.Alert{}
	for _, a := range in {
		out = append(out, render.Alert{Name: a.Name, Severity: a.Severity, SLO: a.SLO, Service: a.Service, Group: a.Group, From: a.From, To: a.To})
	}
	return out
}

// SpentNote tells the page's reader how budgets are drawn.
const SpentNote = "Budgets remaining are drawn as spent during the replay: one rolling window's budget less what the replayed traffic used of it, not the replay's error ratio taken for a whole window's."

// RollingWindows maps each rolling-window SLO to its window. Calendar
// SLOs are left out: their budget restarts at each period's boundary.
func RollingWindows(set model.Set) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, s := range set.SLOs {
		if s.Calendar == nil {
			out[s.Name] = s.Window
		}
	}
	return out
}

// AsSpent redraws the budget-remaining series of data as spent during a
// replay that started at start. The recording is 1 - error ratio / budget
// over the window, and a Prometheus started with the replay has only the
// replay in the window: after one healthy day at half the budget rate it
// reads 50% gone, as if the whole 4w had burned that way. The share of the
// window's budget the replayed traffic spent is that ratio scaled by the
// time elapsed over the window, assuming the traffic seen so far.
func AsSpent(data map[string][]render.Series, windows map[string]time.Duration, start time.Time) map[string][]render.Series {
	for q, ss := range data {
		if !strings.HasPrefix(q, model.BudgetRemaining+"{") {
			continue
		}
		for _, s := range ss {
			window := windows[s.Labels[model.LabelSLO]]
			if window <= 0 {
				continue
			}
			for i, p := range s.Points {
				if elapsed := p.Time.Sub(start); elapsed < window {
					s.Points[i].Value = 1 - (1-p.Value)*max(0, float64(elapsed))/float64(window)
				}
			}
		}
	}
	return data
}
