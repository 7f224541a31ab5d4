package rules

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// Sums of the base rates over a window, the tiles longer windows are built
// from: each holds two series, the sum of the base window's recorded rates
// over its window (stat="sum") and how many there were (stat="count").
const (
	EventsSums    = "inferslo:sli_events:rate_sums"
	BadEventsSums = "inferslo:sli_bad_events:rate_sums"
	// LabelStat tells a sums recording's sum from its count.
	LabelStat = "stat"
)

// windowRates records the event rates of every window between the base
// window and the SLO window (the SLO window too unless it is built from
// hourly tiles), each the mean of the base window's recordings over it, as
// a sum and a count of those recordings divided last.
//
// Reading every base sample of a 2d19h12m window costs 4,032 samples per
// series and evaluation at a 1m interval. So the sum and count of each
// window are recorded, and a window that is a whole number of a shorter
// window's lengths adds that window's sums read at offsets of one length:
// the sums recorded at t, t-v, t-2v... cover (t-v, t], (t-2v, t-v]... without
// overlap or gap, so they add up to exactly the base samples of (t-w, t], as
// avg_over_time would read them. Sums are kept apart from counts, so a
// window whose history is partly missing (a fresh Prometheus, a new group)
// averages what exists, as avg_over_time does: a tile that does not exist is
// left out of the sum, and a stale one is not read, since its series went
// stale when it stopped being recorded. Offsets fall on evaluations because
// every window is a whole number of evaluation intervals.
func (b *builder) windowRates(skip func(time.Duration) bool) {
	var tiles []time.Duration
	for _, w := range b.slo.Windows() {
		if w == b.base || skip(w) {
			continue
		}
		if eval := b.slo.Evaluation; eval <= 0 || w%eval != 0 {
			for _, name := range []string{model.EventsRate, model.BadEventsRate} {
				b.record(name, fmt.Sprintf("avg_over_time(%s[%s])", b.sel(name, b.base), model.FormatDuration(w)), b.identity(w))
			}
			continue
		}
		from, reads := time.Duration(0), w/b.slo.Evaluation
		// Past maxSumsTerms tiles the expression outgrows what rulers and
		// lint read comfortably; the base recordings are read instead.
		for _, v := range tiles {
			if w%v == 0 && w/v < reads && w/v <= maxSumsTerms {
				from, reads = v, w/v
			}
		}
		if w == b.slo.Window && from == 0 && TileWindow(b.slo) > 0 {
			continue
		}
		for _, n := range [][2]string{{model.EventsRate, EventsSums}, {model.BadEventsRate, BadEventsSums}} {
			b.record(n[1], b.sums(n[0], n[1], w, from), b.identity(w))
			sel := b.sel(n[1], w)
			stat := func(v string) string {
				return strings.TrimSuffix(sel, "}") + "," + LabelStat + "=" + strconv.Quote(v) + "}"
			}
			b.record(n[0], fmt.Sprintf("%s / ignoring (%s) %s", stat("sum"), LabelStat, stat("count")), b.identity(w))
		}
		tiles = append(tiles, w)
	}
}

// sums is the expression of the sums of rate over w: from the base
// recordings when from is 0, else from the sums of the shorter window from,
// read once per whole length of it in w.
func (b *builder) sums(rate, sums string, w, from time.Duration) string {
	if from == 0 {
		sel, r := b.sel(rate, b.base), model.FormatDuration(w)
		return fmt.Sprintf("label_replace(sum_over_time(%s[%s]), %q, \"sum\", \"\", \"\")\nor\nlabel_replace(count_over_time(%s[%s]), %q, \"count\", \"\", \"\")",
			sel, r, LabelStat, sel, r, LabelStat)
	}
	sel, n := b.sel(sums, from), int(w/from)
	var out strings.Builder
	out.Grow(32 + n*(len(sel)+64))
	out.WriteString("sum without (tile) (\n  ")
	for k := range n {
		if k > 0 {
			out.WriteString("\n  or\n  ")
		}
		out.WriteString("label_replace(")
		out.WriteString(sel)
		if k > 0 {
			out.WriteString(" offset ")
			out.WriteString(model.FormatDuration(time.Duration(k) * from))
		}
		// Each tile gets a label of its own, so `or` keeps them all.
		out.WriteString(`, "tile", "`)
		out.WriteString(strconv.Itoa(k))
		out.WriteString(`", "", "")`)
	}
	out.WriteString("\n)")
	return out.String()
}

// maxSumsTerms bounds the sums one window's recording adds: past it the
// SLO window is built from hourly tiles instead (TileWindow), and any other
// window from the base recordings.
const maxSumsTerms = 32

// sumsTerms is how many sums of a shorter window build w, or 0 when none
// of the SLO's windows does it in at most maxSumsTerms. Every window that is
// a whole number of evaluation intervals, but the base window, has sums.
func sumsTerms(slo model.SLO, w time.Duration) int {
	e := slo.Evaluation
	if e <= 0 || w%e != 0 {
		return 0
	}
	best := 0
	for _, v := range slo.Windows() {
		if v >= w || v == slo.BaseWindow() || v%e != 0 || w%v != 0 {
			continue
		}
		if n := int(w / v); n <= maxSumsTerms && (best == 0 || n < best) {
			best = n
		}
	}
	return best
}
