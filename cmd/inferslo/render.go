package main

import (
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/render"
	"github.com/inferslo/inferslo/compiler/simulate"
)

type renderCmd struct {
	Specs     []string      `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs  catalogFlag   `embed:""`
	Templates templatesFlag `embed:""`
	Output    string        `short:"o" required:"" help:"Output folder for index.html; replaced as a whole, atomically."`
}

// rateInterval stands in for Grafana's $__rate_interval: four scrapes of
// 30s, a window every rate() has samples for.
const rateInterval = 2 * time.Minute

func (c *renderCmd) Run(e *env) error {
	text, err := c.Templates.load()
	if err != nil {
		return err
	}
	res, err := load(e, c.Specs, c.Catalogs)
	if err != nil {
		return err
	}
	out, err := compiler.Compile(res.Set, compiler.Options{Text: text})
	if err != nil {
		return err
	}
	for _, w := range out.Warnings {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	queries, err := render.Queries(out.Files)
	if err != nil {
		return err
	}
	// The timeline evaluates plain PromQL; the page looks results up by the
	// dashboards' own query text.
	evaluable := make([]string, len(queries))
	for i, q := range queries {
		evaluable[i] = render.Evaluable(q, rateInterval)
	}
	tl, err := simulate.RunTimeline(res.Set, evaluable, simulate.TimelineOptions{})
	if err != nil {
		return fmt.Errorf("replay the review scenario: %w", err)
	}
	data := make(map[string][]render.Series, len(queries))
	for i, q := range queries {
		for _, s := range tl.Series[evaluable[i]] {
			pts := make([]render.Point, len(s.Points))
			for j, p := range s.Points {
				pts[j] = render.Point{Time: p.T, Value: p.V}
			}
			data[q] = append(data[q], render.Series{Labels: s.Labels, Points: pts})
		}
	}
	alerts := []render.Alert{}
	for _, a := range tl.Alerts {
		alerts = append(alerts, render.Alert{Name: a.Name, Severity: a.Severity, SLO: a.SLO, Service: a.Service, From: a.From, To: a.To})
	}
	for _, s := range tl.Skipped {
		fmt.Fprintln(e.stderr, "not simulated:", s)
	}
	page, err := render.Page(res.Set, out.Files, data, render.Options{Scenario: tl.Describe(), Alerts: alerts})
	if err != nil {
		return err
	}
	if err := (artifact.Set{{Path: "index.html", Data: page}}).Write(c.Output, "render"); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s/index.html: %d SLOs, %d panel queries over %s of simulated traffic\n",
		c.Output, len(res.Set.SLOs), len(queries), tl.To.Sub(tl.From))
	return nil
}
