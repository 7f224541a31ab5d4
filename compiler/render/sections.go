package render

import (
	"bytes"
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
)

// writeSLOs summarises every SLO: what it measures, its target and window,
// and for each alert tier the arithmetic behind it.
func writeSLOs(b *bytes.Buffer, set model.Set) {
	b.WriteString("<section id=\"slos\">\n<h2>SLOs</h2>\n<p class=\"note\">Each entry unfolds to its indicator, error budget and alert-tier arithmetic.</p>\n")
	for _, s := range set.SLOs {
		fmt.Fprintf(b, "<details class=\"slo\" id=\"slo-%s\">\n<summary><h3>%s</h3> <span class=\"brief\">%s over %s · %s</span></summary>\n",
			esc(s.Name), esc(sloTitle(s)), esc(s.Objective.Percent()), esc(windowText(s)), esc(sliText(s)))
		if s.Description != "" {
			fmt.Fprintf(b, "<p>%s</p>\n", esc(s.Description))
		}
		budget := s.ErrorBudget()
		b.WriteString("<dl>\n")
		row := func(k, v string) { fmt.Fprintf(b, "<dt>%s</dt><dd>%s</dd>\n", esc(k), esc(v)) }
		row("Service", s.Service.Name)
		row("Indicator", sliText(s))
		over := "a rolling " + model.FormatDuration(s.Window)
		if s.Calendar != nil {
			over = windowText(s) + ", starting afresh at its boundary"
		}
		counted := "events"
		if ts := s.Timeslices; ts != nil && !ts.Average {
			counted = model.FormatDuration(ts.Window) + " slices"
		}
		row("Objective", s.Objective.Percent()+" of "+counted+" good over "+over)
		row("Error budget", fmt.Sprintf("1 - %s = %s of events, about %s of full outage per window",
			s.Objective.String(), budget.String(), outage(s)))
		if s.Source != "" {
			row("Spec", s.Source)
		}
		b.WriteString("</dl>\n")
		if len(s.Alerting.Tiers) == 0 {
			b.WriteString("<p>No burn-rate alerts.</p>\n")
		} else {
			b.WriteString("<table class=\"tiers\">\n<thead><tr><th>Severity</th><th>Long / short window</th><th>Burn factor</th>" +
				"<th>Error ratio that fires</th><th>Budget spent before it fires</th><th>Budget gone at that burn in</th><th>For</th></tr></thead>\n<tbody>\n")
			for _, t := range s.Alerting.Tiers {
				for _, p := range t.Windows {
					fmt.Fprintf(b, "<tr class=\"%s\"><td>%s</td><td>%s / %s</td><td>%s</td><td>%s × %s = %s</td><td>%s × %s / %s = %s</td><td>%s / %s = %s</td><td>%s</td></tr>\n",
						esc(t.Severity), esc(t.Severity),
						model.FormatDuration(p.Long), model.FormatDuration(p.Short),
						esc(p.Factor.String()),
						esc(p.Factor.String()), esc(budget.String()), esc(p.Factor.Mul(budget).String()),
						esc(p.Factor.String()), model.FormatDuration(p.Long), model.FormatDuration(s.Window), esc(approxPercent(p.BudgetFraction(s.Window))),
						model.FormatDuration(s.Window), esc(p.Factor.String()), esc(exhaustion(s.Window, p.Factor)),
						model.FormatDuration(t.For))
				}
			}
			b.WriteString("</tbody>\n</table>\n")
			b.WriteString("<p class=\"note\">A tier fires when the burn rate over both its long and its short window exceeds the factor: the long window proves the burn is significant, the short one that it is still going on.")
			if !s.Alerting.MinEventsPerSecond.IsZero() {
				fmt.Fprintf(b, " Burn alerts need at least %s events per second over the long window.", esc(s.Alerting.MinEventsPerSecond.String()))
			}
			if s.Alerting.NoData {
				b.WriteString(" SLIDataMissing fires when the SLI's series vanish.")
			}
			b.WriteString("</p>\n")
		}
		b.WriteString("</details>\n")
	}
	b.WriteString("</section>\n")
}

// outage is how long a full outage may last per window within the budget.
func outage(s model.SLO) string {
	return roundDuration(s.ErrorBudget().Mul(model.NewDecimal(int64(s.Window), 1)))
}

// exhaustion is how long the whole budget lasts at a burn factor.
func exhaustion(window time.Duration, factor model.Decimal) string {
	if factor.IsZero() {
		return "never"
	}
	return roundDuration(model.NewDecimal(int64(window), 1).Quo(factor))
}

// roundDuration prints nanoseconds held in a decimal, to the second.
func roundDuration(ns model.Decimal) string {
	d := time.Duration(ns.Float()).Round(time.Second)
	return model.FormatDuration(d)
}

func approxPercent(d model.Decimal) string {
	p := d.Mul(model.NewDecimal(100, 1))
	if !strings.Contains(p.Mul(model.NewDecimal(100, 1)).String(), ".") {
		return p.String() + "%"
	}
	return fmt.Sprintf("≈%.3g%%", p.Float())
}

func sloTitle(s model.SLO) string {
	if s.DisplayName != "" && s.DisplayName != s.Name {
		return s.DisplayName + " (" + s.Name + ")"
	}
	return s.Name
}

// windowText is the SLO window as a reader names it: "each calendar
// month" for a calendar SLO, the duration otherwise.
func windowText(s model.SLO) string {
	if s.Calendar != nil {
		return "each " + s.Calendar.Name()
	}
	return model.FormatDuration(s.Window)
}

func sliText(s model.SLO) string {
	if ts := s.Timeslices; ts != nil {
		return slicesText(s, ts)
	}
	if inf := s.Inference; inf != nil {
		engine := inf.EngineTitle
		engine = cmp.Or(engine, inf.Engine)
		if inf.Threshold.IsZero() {
			return fmt.Sprintf("%s from %s", inf.Role, engine)
		}
		return fmt.Sprintf("%s within %ss (histogram %s, %s)", inf.Role, inf.Threshold.String(), inf.Histogram, engine)
	}
	switch {
	case s.SLI.Good != nil:
		return "good events / total events"
	case s.SLI.Bad != nil:
		return "bad events / total events"
	case s.SLI.Raw != nil:
		return "a " + s.SLI.RawType + " ratio read directly"
	}
	return "ratio of events"
}

// slicesText says what makes a time slice good.
func slicesText(s model.SLO, ts *model.Timeslices) string {
	slice := model.FormatDuration(ts.Window) + " slices"
	switch {
	case ts.Average:
		return "the mean of each " + model.FormatDuration(ts.Window) + " slice's ratio of good events"
	case s.SLI.Threshold != nil:
		t := s.SLI.Threshold
		if !ts.Target.IsZero() {
			return fmt.Sprintf("%s good when %s of their evaluations read %s %s", slice, ts.Target.Percent(), t.Op, t.Value.String())
		}
		return fmt.Sprintf("%s good when their value is %s %s", slice, t.Op, t.Value.String())
	}
	return fmt.Sprintf("%s good when %s of their events are", slice, ts.Target.Percent())
}

// writeDashboard draws one dashboard on Grafana's 24-column grid.
func writeDashboard(b *bytes.Buffer, d dashboard, data map[string][]Series, alerts []Alert, sp span) {
	fmt.Fprintf(b, "<section class=\"dashboard\" id=\"%s\">\n<h2>%s</h2>\n", esc(anchor(d)), esc(d.Title))
	if d.path != "" {
		fmt.Fprintf(b, "<p class=\"file\">%s · uid %s</p>\n", esc(d.path), esc(d.UID))
	}
	if d.note != "" {
		fmt.Fprintf(b, "<p class=\"note\">%s</p>\n", esc(d.note))
	}
	b.WriteString("<div class=\"grid\">\n")
	for _, p := range d.Panels {
		style := fmt.Sprintf("grid-column:%d / span %d;grid-row:%d / span %d", p.GridPos.X+1, p.GridPos.W, p.GridPos.Y+1, p.GridPos.H)
		if p.Type == "row" {
			fmt.Fprintf(b, "<h3 class=\"row\" style=\"%s\">%s</h3>\n", style, esc(p.Title))
			continue
		}
		fmt.Fprintf(b, "<figure class=\"panel %s\" data-panel-id=\"%d\" style=\"%s\">\n<figcaption><span class=\"title\">%s</span>",
			esc(p.Type), p.ID, style, esc(p.Title))
		if p.Description != "" {
			fmt.Fprintf(b, "<details><summary>?</summary><p>%s</p></details>", esc(p.Description))
		}
		b.WriteString("</figcaption>\n")
		switch p.Type {
		case "text":
			fmt.Fprintf(b, "<div class=\"text\">%s</div>\n", markdown(p.Options.Content))
		case "stat":
			writeStat(b, p, data)
		default:
			writeTimeseries(b, p, data, alerts, sp)
		}
		b.WriteString("</figure>\n")
	}
	b.WriteString("</div>\n</section>\n")
}

func writeArtifacts(b *bytes.Buffer, files artifact.Set) {
	b.WriteString("<section id=\"artifacts\">\n<h2>Generated files</h2>\n<table class=\"files\">\n<thead><tr><th>Path</th><th>Bytes</th></tr></thead>\n<tbody>\n")
	sorted := append(artifact.Set{}, files...)
	sorted.Sort()
	for _, f := range sorted {
		fmt.Fprintf(b, "<tr><td><code>%s</code></td><td>%d</td></tr>\n", esc(f.Path), len(f.Data))
	}
	b.WriteString("</tbody>\n</table>\n</section>\n")
}
