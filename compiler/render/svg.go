package render

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// Chart geometry in SVG user units: one grid column is 50 wide and one grid
// row 30 high, like Grafana's layout; the caption and legend take the rest.
const (
	colUnit      = 50.0
	rowUnit      = 30.0
	chrome       = 62.0 // caption and legend, outside the SVG
	marginLeft   = 64.0
	marginRight  = 14.0
	marginTop    = 8.0
	marginBottom = 22.0
	minBand      = 3.0 // narrowest alert band drawn
)

func chartSize(p panel) (w, h float64) {
	w = math.Max(200, float64(p.GridPos.W)*colUnit)
	h = math.Max(90, float64(p.GridPos.H)*rowUnit-chrome)
	return w, h
}

// line is one drawn series.
type line struct {
	name   string
	color  string
	points []Point
}

func panelLines(p panel, data map[string][]Series) []line {
	var out []line
	for _, t := range p.Targets {
		for _, s := range data[t.Expr] {
			out = append(out, line{name: legendName(s, t), points: s.Points})
		}
	}
	for i := range out {
		out[i].color = palette(i, len(out))
	}
	return out
}

// legendName fills a legendFormat's {{label}} from the series' labels.
func legendName(s Series, t target) string {
	if s.Name != "" {
		return s.Name
	}
	name := t.LegendFormat
	for k, v := range s.Labels {
		name = strings.ReplaceAll(name, "{{"+k+"}}", v)
		name = strings.ReplaceAll(name, "{{ "+k+" }}", v)
	}
	// Grafana prints a label the series lacks as nothing.
	name = regexp.MustCompile(`\{\{\s*[^}]*\}\}`).ReplaceAllString(name, "")
	name = strings.Join(strings.Fields(name), " ")
	if name == "" {
		return t.RefID
	}
	return name
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// writeTimeseries draws lines over the shared time span, with threshold
// lines and alert firing bands behind them.
func writeTimeseries(b *bytes.Buffer, p panel, data map[string][]Series, alerts []Alert, sp span) {
	w, h := chartSize(p)
	lines := panelLines(p, data)
	style := p.thresholdStyle()
	ths := p.thresholds()

	lo, hi, hasData := math.Inf(1), math.Inf(-1), false
	for _, l := range lines {
		for _, pt := range l.points {
			if finite(pt.Value) {
				lo, hi, hasData = math.Min(lo, pt.Value), math.Max(hi, pt.Value), true
			}
		}
	}
	if style != "" {
		for _, th := range ths {
			lo, hi = math.Min(lo, th.value), math.Max(hi, th.value)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	def := p.FieldConfig.Defaults
	if def.Min != nil {
		lo = *def.Min
	}
	if def.Max != nil {
		hi = *def.Max
	}
	if hi <= lo {
		hi = lo + math.Max(1, math.Abs(lo))
	}
	ticks := niceTicks(lo, hi)
	if def.Min == nil {
		lo = ticks[0]
	}
	if def.Max == nil {
		hi = ticks[len(ticks)-1]
	}

	from, to := sp.from, sp.to
	if !sp.ok {
		from, to = time.Unix(0, 0), time.Unix(3600, 0)
	}
	// Threshold labels sit right of the plot, where no data is drawn over
	// them: the right margin grows to the longest label.
	margin := marginRight
	if style != "" {
		for _, th := range ths {
			if th.value >= lo && th.value <= hi {
				margin = math.Max(margin, 8+6*float64(len([]rune(formatValue(th.value, def.Unit)))))
			}
		}
	}
	plotW, plotH := w-marginLeft-margin, h-marginTop-marginBottom
	x := func(t time.Time) float64 {
		return marginLeft + float64(t.Sub(from))/float64(to.Sub(from))*plotW
	}
	y := func(v float64) float64 {
		v = math.Max(lo, math.Min(hi, v))
		return marginTop + (hi-v)/(hi-lo)*plotH
	}

	fmt.Fprintf(b, "<svg viewBox=\"0 0 %s %s\" role=\"img\" aria-label=\"%s\">\n", f1(w), f1(h), esc(p.Title))
	bottom, right := marginTop+plotH, marginLeft+plotW

	// Alert firing bands, behind everything.
	if sp.ok {
		for _, a := range alerts {
			if !a.To.After(from) || !a.From.Before(to) {
				continue
			}
			// An alert of minutes over a month is narrower than a pixel:
			// it keeps a width the eye finds.
			x1, x2 := x(Later(a.From, from)), x(Earlier(a.To, to))
			if x2-x1 < minBand {
				x1 = math.Max(marginLeft, math.Min((x1+x2-minBand)/2, right-minBand))
				x2 = x1 + minBand
			}
			fmt.Fprintf(b, "<rect class=\"band %s\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\"><title>%s</title></rect>\n",
				esc(bandClass(a)), f1(x1), f1(marginTop), f1(x2-x1), f1(plotH), esc(alertText(a)))
		}
	}

	// Grid, y labels, x labels.
	var grid strings.Builder
	for _, v := range ticks {
		if v < lo || v > hi {
			continue
		}
		fmt.Fprintf(&grid, "M%s %sH%s", f1(marginLeft), f1(y(v)), f1(right))
		fmt.Fprintf(b, "<text class=\"ylabel\" x=\"%s\" y=\"%s\">%s</text>\n", f1(marginLeft-6), f1(y(v)+4), esc(formatValue(v, def.Unit)))
	}
	if sp.ok {
		// A label needs about 80 units; fewer ticks on narrow panels.
		ticks := timeTicks(from, to, int(plotW/80))
		for i, t := range ticks {
			step := to.Sub(from)
			if i > 0 {
				step = t.Sub(ticks[i-1])
			} else if len(ticks) > 1 {
				step = ticks[1].Sub(t)
			}
			fmt.Fprintf(&grid, "M%s %sV%s", f1(x(t)), f1(marginTop), f1(bottom))
			fmt.Fprintf(b, "<text class=\"xlabel\" x=\"%s\" y=\"%s\">%s</text>\n", f1(x(t)), f1(h-6), esc(timeLabel(t, step)))
		}
	}
	fmt.Fprintf(b, "<path class=\"grid\" d=\"%s\"/>\n", grid.String())
	fmt.Fprintf(b, "<path class=\"axis\" d=\"M%s %sV%sH%s\"/>\n", f1(marginLeft), f1(marginTop), f1(bottom), f1(right))

	// Thresholds: the SLO line, the budget line, the tier factors.
	if style != "" {
		var labels []thLabel
		for _, th := range ths {
			if th.value < lo || th.value > hi {
				continue
			}
			fmt.Fprintf(b, "<path class=\"threshold %s\" stroke=\"%s\" d=\"M%s %sH%s\"><title>threshold %s</title></path>\n",
				style, cssColor(th.color), f1(marginLeft), f1(y(th.value)), f1(right), esc(formatValue(th.value, def.Unit)))
			labels = append(labels, thLabel{y: y(th.value) + 3.5, color: cssColor(th.color), text: formatValue(th.value, def.Unit)})
		}
		for _, l := range spread(labels, marginTop+4, bottom+4, 11) {
			fmt.Fprintf(b, "<text class=\"thlabel\" style=\"fill:%s\" x=\"%s\" y=\"%s\">%s</text>\n",
				l.color, f1(right+4), f1(l.y), esc(l.text))
		}
	}

	stepped := def.Custom != nil && def.Custom.LineInterpolation == "stepAfter"
	for _, l := range lines {
		d := pathOf(l.points, x, y, stepped)
		if d == "" {
			continue
		}
		fmt.Fprintf(b, "<path class=\"series\" stroke=\"%s\" d=\"%s\"><title>%s</title></path>\n", l.color, d, esc(l.name))
	}
	if !hasData {
		msg := def.NoValue
		msg = cmp.Or(msg, "No data")
		fmt.Fprintf(b, "<text class=\"nodata\" x=\"%s\" y=\"%s\">%s</text>\n", f1(marginLeft+plotW/2), f1(marginTop+plotH/2), esc(msg))
	}
	b.WriteString("</svg>\n")
	writeLegend(b, lines, ths, style, def.Unit, alerts, sp)
}

// thLabel is a threshold's value printed at the right end of its line.
type thLabel struct {
	y           float64
	color, text string
}

// spread moves labels apart vertically so that no two are closer than gap,
// keeping them within [top, bottom] where there is room, and each as near
// its line as the others allow.
func spread(ls []thLabel, top, bottom, gap float64) []thLabel {
	out := append([]thLabel(nil), ls...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].y < out[j].y })
	for i := range out {
		if i > 0 && out[i].y < out[i-1].y+gap {
			out[i].y = out[i-1].y + gap
		}
	}
	// Labels pushed past the bottom move up, as far as the top allows.
	for i := len(out) - 1; i >= 0; i-- {
		limit := bottom
		if i < len(out)-1 {
			limit = out[i+1].y - gap
		}
		if out[i].y > limit {
			out[i].y = math.Max(limit, top)
		}
	}
	return out
}

// pathOf draws points as one path; missing values break the line. A
// line leaves out the points within a fifth of a unit of the straight
// segment drawn past them (a page is drawn at about a unit per pixel, so
// the line looks the same), which keeps smooth stretches to a few points.
func pathOf(pts []Point, x func(time.Time) float64, y func(float64) float64, stepped bool) string {
	var d strings.Builder
	var run [][2]float64
	flush := func() {
		if !stepped {
			run = simplify(run, 0.2)
		}
		for i, p := range run {
			switch {
			case i == 0:
				fmt.Fprintf(&d, "M%s %s", f1(p[0]), f1(p[1]))
			case stepped:
				fmt.Fprintf(&d, "H%sV%s", f1(p[0]), f1(p[1]))
			default:
				fmt.Fprintf(&d, "L%s %s", f1(p[0]), f1(p[1]))
			}
		}
		run = run[:0]
	}
	for _, p := range pts {
		if !finite(p.Value) {
			flush()
			continue
		}
		run = append(run, [2]float64{x(p.Time), y(p.Value)})
	}
	flush()
	return d.String()
}

// simplify keeps the first and last of pts and each point that some point
// skipped since the last kept one would lie farther than tol from the
// segment joining them.
func simplify(pts [][2]float64, tol float64) [][2]float64 {
	if len(pts) < 3 {
		return pts
	}
	out := [][2]float64{pts[0]}
	k := 0 // index of the last kept point
	for n := 2; n < len(pts); n++ {
		a, b := pts[k], pts[n]
		for j := k + 1; j < n; j++ {
			if distToSegment(pts[j], a, b) > tol {
				k = n - 1
				out = append(out, pts[k])
				break
			}
		}
	}
	return append(out, pts[len(pts)-1])
}

// distToSegment is the distance from p to the segment a-b.
func distToSegment(p, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	l2 := dx*dx + dy*dy
	t := 0.0
	if l2 > 0 {
		t = math.Max(0, math.Min(1, ((p[0]-a[0])*dx+(p[1]-a[1])*dy)/l2))
	}
	return math.Hypot(p[0]-a[0]-t*dx, p[1]-a[1]-t*dy)
}

func writeLegend(b *bytes.Buffer, lines []line, ths []threshold, style, unit string, alerts []Alert, sp span) {
	// Past the classic palette's ten series the legend may take up to
	// half the panel, so every series can be told by name and colour.
	if len(lines) > 10 {
		b.WriteString("<ul class=\"legend many\">")
	} else {
		b.WriteString("<ul class=\"legend\">")
	}
	for _, l := range lines {
		fmt.Fprintf(b, "<li><span class=\"swatch\" style=\"background:%s\"></span>%s</li>", l.color, esc(l.name))
	}
	if style != "" {
		for _, th := range ths {
			fmt.Fprintf(b, "<li><span class=\"swatch line %s\" style=\"border-color:%s\"></span>%s</li>", style, cssColor(th.color), esc(formatValue(th.value, unit)))
		}
	}
	if sp.ok && len(alerts) > 0 {
		b.WriteString("<li><span class=\"swatch band-page\"></span>page firing</li><li><span class=\"swatch band-ticket\"></span>ticket / no data firing</li>")
		for _, a := range alerts {
			if a.Severity == MarkerSeverity {
				b.WriteString("<li><span class=\"swatch band-marker\"></span>event (hover for which)</li>")
				break
			}
		}
	}
	b.WriteString("</ul>\n")
}

func bandClass(a Alert) string {
	switch a.Severity {
	case model.PageTier:
		return "band-page"
	case MarkerSeverity:
		return "band-marker"
	}
	return "band-ticket"
}

// MarkerSeverity marks an Alert that is an event at an instant (From ==
// To), drawn as a thin line: when an autoscaler first asked for replicas.
const MarkerSeverity = "marker"

func alertText(a Alert) string {
	return strings.Join(strings.Fields(fmt.Sprintf("%s %s %s %s %s – %s", a.Name, a.Severity, a.SLO, a.Group,
		a.From.UTC().Format("Jan 2 15:04"), a.To.UTC().Format("Jan 2 15:04"))), " ")
}

// Later is the later of two times, Earlier the earlier.
func Later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func Earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// writeStat draws the last value of each series, coloured by thresholds,
// over a sparkline of its history.
func writeStat(b *bytes.Buffer, p panel, data map[string][]Series) {
	w, h := chartSize(p)
	lines := panelLines(p, data)
	def := p.FieldConfig.Defaults
	fmt.Fprintf(b, "<svg viewBox=\"0 0 %s %s\" role=\"img\" aria-label=\"%s\">\n", f1(w), f1(h), esc(p.Title))
	if len(lines) == 0 {
		fmt.Fprintf(b, "<path class=\"axis\" d=\"M10 %sH%s\"/>\n", f1(h-10), f1(w-10))
		fmt.Fprintf(b, "<text class=\"nodata\" x=\"%s\" y=\"%s\">No data</text>\n</svg>\n", f1(w/2), f1(h/2))
		return
	}
	cols := min(len(lines), 4)
	rows := (len(lines) + cols - 1) / cols
	cw, ch := w/float64(cols), h/float64(rows)
	// A cell too short for a name band and a readable value: every value
	// gets a line of its own instead.
	if ch < statNameBand+minStatFont {
		writeStatList(b, p, lines, w, h)
		b.WriteString("</svg>\n")
		return
	}
	for i, l := range lines {
		cx, cy := float64(i%cols)*cw, float64(i/cols)*ch
		last, ok := lastValue(l.points)
		color := "#7f7f7f"
		text := "No data"
		if ok {
			color = cssColor(colorFor(p, last))
			text = formatValue(last, def.Unit)
		}
		// The name takes a band of its own at the top and the value the
		// space below it, so neither is drawn over the other however many
		// SLOs share the panel. The sparkline fills the cell below the
		// value, or lies behind it (as Grafana draws it) when the cell is
		// too short for both.
		const nameBand = statNameBand
		size := math.Max(minStatFont, math.Min((ch-nameBand)*0.55, cw/float64(len([]rune(text))+2)*1.7))
		sparkTop := cy + nameBand + size + 2
		if cy+ch-2-sparkTop < 10 {
			sparkTop = cy + nameBand
		}
		if d := sparkline(l.points, cx+6, sparkTop, cw-12, cy+ch-2-sparkTop); d != "" {
			fmt.Fprintf(b, "<path class=\"spark\" stroke=\"%s\" d=\"%s\"/>\n", color, d)
		} else {
			fmt.Fprintf(b, "<path class=\"axis\" d=\"M%s %sH%s\"/>\n", f1(cx+6), f1(cy+ch-4), f1(cx+cw-6))
		}
		fmt.Fprintf(b, "<text class=\"statname\" x=\"%s\" y=\"%s\"><title>%s</title>%s</text>\n",
			f1(cx+cw/2), f1(cy+12), esc(l.name), esc(clip(l.name, int((cw-8)/6.5))))
		fmt.Fprintf(b, "<text class=\"statvalue\" style=\"fill:%s;font-size:%spx\" x=\"%s\" y=\"%s\">%s</text>\n",
			color, f1(size), f1(cx+cw/2), f1(cy+nameBand+size*0.9), esc(text))
	}
	b.WriteString("</svg>\n")
}

const (
	// statNameBand is the height of a stat cell's name, minStatFont the
	// smallest value drawn (a page is read at about one unit per pixel).
	statNameBand = 16.0
	minStatFont  = 12.0
)

// writeStatList draws many stat values as a list: one line per series in
// as many columns as fit, each its name, a sparkline of its history and
// its last value in the colour of its threshold step.
func writeStatList(b *bytes.Buffer, p panel, lines []line, w, h float64) {
	def := p.FieldConfig.Defaults
	// Lines at least 16 units apart: more columns, narrower, when the
	// panel is too short for them; names shorten first, never values.
	fit := max(1, int(h/16))
	cols := max(1, min(len(lines), int(w/180)), (len(lines)+fit-1)/fit)
	rows := (len(lines) + cols - 1) / cols
	cw, lh := w/float64(cols), math.Min(24, h/float64(rows))
	font := math.Max(minStatFont, math.Min(14, lh*0.75))
	for i, l := range lines {
		cx, cy := float64(i/rows)*cw, float64(i%rows)*lh
		last, ok := lastValue(l.points)
		color, text := "#7f7f7f", "No data"
		if ok {
			color, text = cssColor(colorFor(p, last)), formatValue(last, def.Unit)
		}
		nameW := cw * 0.5
		if d := sparkline(l.points, cx+nameW, cy+lh*0.2, cw*0.2, lh*0.6); d != "" {
			fmt.Fprintf(b, "<path class=\"spark\" stroke=\"%s\" d=\"%s\"/>\n", color, d)
		}
		fmt.Fprintf(b, "<text class=\"statname list\" style=\"font-size:%spx\" x=\"%s\" y=\"%s\"><title>%s</title>%s</text>\n",
			f1(font), f1(cx+4), f1(cy+lh*0.72), esc(l.name), esc(clip(l.name, int((nameW-8)/(font*0.6)))))
		fmt.Fprintf(b, "<text class=\"statvalue list\" style=\"fill:%s;font-size:%spx\" x=\"%s\" y=\"%s\">%s</text>\n",
			color, f1(font), f1(cx+cw-6), f1(cy+lh*0.72), esc(text))
	}
}

// clip shortens s to at most n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if n < 2 || len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func lastValue(pts []Point) (float64, bool) {
	for i := len(pts) - 1; i >= 0; i-- {
		if finite(pts[i].Value) {
			return pts[i].Value, true
		}
	}
	return 0, false
}

// colorFor is the colour of the highest threshold step at or below v.
func colorFor(p panel, v float64) string {
	th := p.FieldConfig.Defaults.Thresholds
	if th == nil || len(th.Steps) == 0 {
		return "blue"
	}
	color := th.Steps[0].Color
	for _, s := range th.Steps {
		if s.Value == nil || v >= *s.Value {
			color = s.Color
		}
	}
	return color
}

// sparkline scales points into a box.
func sparkline(pts []Point, x0, y0, w, h float64) string {
	var lo, hi float64
	var t0, t1 time.Time
	n := 0
	for _, p := range pts {
		if !finite(p.Value) {
			continue
		}
		if n == 0 {
			lo, hi, t0, t1 = p.Value, p.Value, p.Time, p.Time
		}
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
		if p.Time.After(t1) {
			t1 = p.Time
		}
		n++
	}
	if n < 2 {
		return ""
	}
	if hi == lo {
		hi = lo + 1
	}
	span := float64(t1.Sub(t0))
	span = cmp.Or(span, 1)
	return pathOf(pts,
		func(t time.Time) float64 { return x0 + float64(t.Sub(t0))/span*w },
		func(v float64) float64 { return y0 + (hi-v)/(hi-lo)*h },
		false)
}
