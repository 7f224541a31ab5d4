// Package render draws the generated Grafana dashboards as one static HTML
// page for review: every panel as SVG over time series handed to it
// (a simulated scenario), with SLO thresholds, alert firing bands, a summary
// of each SLO and its alert math, and the list of generated files. The page
// loads nothing from the network and runs no script.
package render

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
)

// Point is one sample.
type Point struct {
	Time  time.Time
	Value float64
}

// Series is one line of a panel query's result.
type Series struct {
	// Name is the legend; when empty the target's legendFormat is filled
	// from Labels, the way Grafana does.
	Name   string
	Labels map[string]string
	Points []Point
}

// Alert is one interval during which an alert fired.
type Alert struct {
	Name     string // ErrorBudgetBurn, SLIDataMissing
	Severity string // page, ticket
	SLO      string
	Service  string
	// Group names the group of a grouped SLO (`model_name="vllm-a"`).
	Group    string
	From, To time.Time
}

// Review is the page drawn one dashboard at a time, so a caller can drop
// each service's data once its dashboard is drawn: memory holds the drawn
// sections, not every query's result.
type Review struct {
	set   model.Set
	files artifact.Set
	title string
	ds    []dashboard

	mu       sync.Mutex
	sections [][]byte
	span     span
	// pending are dashboards without data of their own, drawn over the
	// page's span once it is known.
	pending map[int]pendingDraw
	// extra are sections drawn after the dashboards (AddSection).
	extra []drawnSection
}

type pendingDraw struct {
	data   map[string][]Series
	alerts []Alert
}

// NewReview reads the dashboards among files; title heads the page
// ("inferslo review" when empty).
func NewReview(set model.Set, files artifact.Set, title string) (*Review, error) {
	ds, err := dashboards(files)
	if err != nil {
		return nil, err
	}
	if len(ds) == 0 {
		return nil, fmt.Errorf("no dashboards among the %d generated files", len(files))
	}
	title = cmp.Or(title, "inferslo review")
	return &Review{set: set, files: files, title: title, ds: ds, sections: make([][]byte, len(ds)), pending: map[int]pendingDraw{}}, nil
}

// Queries lists the distinct panel queries of a service's dashboard ("" is
// the overview), in panel order.
func (r *Review) Queries(service string) []string {
	if i := r.index(service); i >= 0 {
		return r.ds[i].queries(map[string]bool{}, nil)
	}
	return nil
}

func (r *Review) index(service string) int {
	for i, d := range r.ds {
		if d.service == service {
			return i
		}
	}
	return -1
}

// Draw draws a service's dashboard ("" the overview) over data (each panel
// query's result, keyed by the query text exactly as the dashboard has it:
// see Queries and Evaluable), with the alerts it shows among alerts. Every query's points
// count toward the page's time span. Services may be drawn concurrently.
func (r *Review) Draw(service string, data map[string][]Series, alerts []Alert) {
	i := r.index(service)
	sp := pointSpan(data)
	r.mu.Lock()
	r.span = r.span.union(sp)
	r.mu.Unlock()
	if i < 0 {
		return
	}
	d := r.ds[i]
	own := dashboardSpan(d, data)
	if !own.ok {
		r.mu.Lock()
		r.pending[i] = pendingDraw{data: data, alerts: alerts}
		r.mu.Unlock()
		return
	}
	var b bytes.Buffer
	if d.service != "" {
		writeIncident(&b, d, data, bandsFor(d, alerts), own)
	}
	writeDashboard(&b, d, data, bandsFor(d, alerts), own)
	r.mu.Lock()
	r.sections[i] = b.Bytes()
	r.mu.Unlock()
}

// Page assembles the drawn dashboards into the page under a sentence on
// what the data shows ("a healthy day, then a fast burn"); a dashboard never drawn shows
// its panels without data.
func (r *Review) Page(scenario string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	// The drawn sections are most of the page: one allocation holds it.
	size := 64 << 10
	for _, sec := range r.sections {
		size += len(sec)
	}
	var b bytes.Buffer
	b.Grow(size)
	sp := r.span.widened()
	writeHead(&b, r.title, "Scenario: "+scenario, sp)
	b.WriteString("<nav><ul>\n<li><a href=\"#slos\">SLOs</a></li>\n")
	for _, d := range r.ds {
		fmt.Fprintf(&b, "<li><a href=\"#%s\">%s</a></li>\n", esc(anchor(d)), esc(d.Title))
	}
	for _, x := range r.extra {
		fmt.Fprintf(&b, "<li><a href=\"#%s\">%s</a></li>\n", esc("dashboard-"+x.id), esc(x.title))
	}
	b.WriteString("<li><a href=\"#artifacts\">Generated files</a></li>\n</ul></nav>\n</header>\n<main>\n")

	// The charts come first; the SLO catalog, one folded entry per SLO,
	// follows them, so a long list of SLOs does not push the charts down.
	for i, d := range r.ds {
		if sec := r.sections[i]; sec != nil {
			b.Write(sec)
			continue
		}
		// Without data of its own a dashboard's axes span the page's data.
		p := r.pending[i]
		writeDashboard(&b, d, p.data, bandsFor(d, p.alerts), sp)
	}
	for _, x := range r.extra {
		b.Write(x.html)
	}
	writeSLOs(&b, r.set)
	writeArtifacts(&b, r.files)
	b.WriteString("</main>\n</body>\n</html>\n")
	return b.Bytes()
}

// writeHead writes the page up to its navigation: title, the sentence on
// what the data shows (none when it ends in a colon and space) and its span.
func writeHead(b *bytes.Buffer, title, scenario string, sp span) {
	fmt.Fprintf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n", esc(title))
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<style>\n" + css + "</style>\n</head>\n<body>\n")
	fmt.Fprintf(b, "<header><h1>%s</h1>\n", esc(title))
	if scenario != "" && !strings.HasSuffix(scenario, ": ") {
		fmt.Fprintf(b, "<p class=\"scenario\">%s</p>\n", esc(scenario))
	}
	if sp.ok {
		fmt.Fprintf(b, "<p class=\"span\">Data from %s to %s (UTC).</p>\n", sp.from.UTC().Format("2006-01-02 15:04"), sp.to.UTC().Format("2006-01-02 15:04"))
	}
}

func anchor(d dashboard) string {
	if d.service == "" {
		return "dashboard-overview"
	}
	return "dashboard-" + d.service
}

// Evaluable turns a dashboard query into plain PromQL the way Grafana does
// before sending it: interval macros become durations and every template
// variable its "All" value.
func Evaluable(query string, rateInterval time.Duration) string {
	q := regexp.MustCompile(`=~"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"`).ReplaceAllString(query, `=~".*"`)
	d := model.FormatDuration(rateInterval)
	return strings.NewReplacer("$__rate_interval", d, "$__interval", d, "$__range", d).Replace(q)
}

// span is the time range all charts share, so panels line up.
type span struct {
	from, to time.Time
	ok       bool
}

func timeSpan(data map[string][]Series) span {
	return pointSpan(data).widened()
}

// pointSpan is the range from the first to the last point of data.
func pointSpan(data map[string][]Series) span {
	var s span
	for _, ss := range data {
		for _, se := range ss {
			for _, p := range se.Points {
				if !s.ok || p.Time.Before(s.from) {
					s.from = p.Time
				}
				if !s.ok || p.Time.After(s.to) {
					s.to = p.Time
				}
				s.ok = true
			}
		}
	}
	return s
}

// widened gives a span of one instant a minute, so axes have a width.
func (s span) widened() span {
	if s.ok && !s.to.After(s.from) {
		s.to = s.from.Add(time.Minute)
	}
	return s
}

// union is the range covering both spans.
func (s span) union(o span) span {
	switch {
	case !o.ok:
		return s
	case !s.ok:
		return o
	}
	if o.from.Before(s.from) {
		s.from = o.from
	}
	if o.to.After(s.to) {
		s.to = o.to
	}
	return s
}

// dashboardSpan is the time range of one dashboard's own data, so its time
// axes end where its data ends.
func dashboardSpan(d dashboard, data map[string][]Series) span {
	own := map[string][]Series{}
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			if !strings.Contains(t.Expr, "ALERTS{") {
				own[t.Expr] = data[t.Expr]
			}
		}
	}
	return timeSpan(own)
}

// bandsFor picks the alerts a dashboard shows: its service's, or all of
// them on the overview.
func bandsFor(d dashboard, alerts []Alert) []Alert {
	var out []Alert
	for _, a := range alerts {
		if d.service == "" || a.Service == d.service || a.Service == "" {
			out = append(out, a)
		}
	}
	return out
}

func esc(s string) string { return html.EscapeString(s) }
