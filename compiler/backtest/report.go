package backtest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/render"
	"github.com/inferslo/inferslo/compiler/safetext"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// Report is what the SLOs would have said over the range. Its JSON form is
// the alerts and the SLOs' figures only.
type Report struct {
	Alerts []Alert     `json:"alerts"`
	SLOs   []SLOReport `json:"slos"`

	From, To time.Time `json:"-"`
	// Evaluated is when the replay started (before From: the warm-up).
	Evaluated time.Time     `json:"-"`
	Step      time.Duration `json:"-"`
	Stats     Stats         `json:"-"`
}

// Alert is one interval during which an alert fired.
type Alert struct {
	SLO       string            `json:"slo"`
	AlertName string            `json:"alertname"`
	Severity  string            `json:"severity"`
	Labels    map[string]string `json:"labels"`
	FiredAt   time.Time         `json:"firedAt"`
	// ResolvedAt is nil while the alert still fires at the range's end.
	ResolvedAt *time.Time `json:"resolvedAt"`
}

// SLOReport is one SLO group's figures over the range.
type SLOReport struct {
	SLO string `json:"slo"`
	// Labels are the group's values of the SLO's groupBy labels.
	Labels map[string]string `json:"labels"`
	// SLI is the share of good events (nil without traffic).
	SLI *float64 `json:"sli"`
	// BudgetSpent is the share of one SLO window's error budget the range
	// spent.
	BudgetSpent *float64 `json:"budgetSpent"`

	// Periods are the calendar days, weeks (from Monday) and months, UTC.
	Periods []Period `json:"-"`
	// Worst are the hours with the highest error ratio, worst first.
	Worst []Period `json:"-"`
	// Timeline is the range in even buckets, for the HTML report.
	Timeline []Bucket `json:"-"`
	// Zoom is the stretch around the group's first page in finer
	// buckets (their Spent counts over that stretch only); nil without a
	// page.
	Zoom []Bucket `json:"-"`
}

// Bucket is one stretch of a timeline: its error ratio, and the share of
// the window's budget spent from the range's start to the bucket's end,
// counted as the report's BudgetSpent is, so the last bucket's is it.
type Bucket struct {
	From, To   time.Time
	ErrorRatio float64
	Spent      float64
}

// bucketSizes are the timeline's bucket widths, the first that cuts the
// range in at most maxBuckets.
var bucketSizes = []time.Duration{5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}

const maxBuckets = 400

// timeline sums the samples in even buckets from from to to; buckets
// without events are left out. A bucket's spend is its bad events over
// the bad events the window allows at the range's traffic.
func timeline(samples []*sample, from, to time.Time, budget float64, window time.Duration) []Bucket {
	size := bucketSizes[len(bucketSizes)-1]
	for _, d := range bucketSizes {
		if to.Sub(from)/d <= maxBuckets {
			size = d
			break
		}
	}
	total, _ := sums(samples, from, to)
	if total == 0 {
		return nil
	}
	allowed := total * budget * float64(window) / float64(to.Sub(from))
	var out []Bucket
	bad := 0.0
	for p := from.Truncate(size); p.Before(to); p = p.Add(size) {
		lo, hi := render.Later(p, from), render.Earlier(p.Add(size), to)
		n, k := sums(samples, lo, hi)
		if n == 0 {
			continue
		}
		bad += k
		out = append(out, Bucket{From: lo, To: hi, ErrorRatio: k / n, Spent: bad / allowed})
	}
	return out
}

// Period is a stretch of the range and its figures.
type Period struct {
	Kind     string // "day", "week", "month" or "hour"
	From, To time.Time
	// ErrorRatio is bad over all events; Spent the share of the window's
	// budget spent.
	ErrorRatio, Spent float64
}

// sample is one evaluation's base-window rates: n events and k bad ones.
type sample struct {
	t    int64
	n, k float64
}

// summarize reads the base window's recordings of the replay and sums
// them per group and period: each evaluation's rate stands for one
// interval, which cancels out of every ratio.
func summarize(rp *prom.Replay, slo model.SLO, evalFrom, from, to time.Time, alerts []Alert) ([]SLOReport, error) {
	sel := fmt.Sprintf("{slo=%s,window=%s}[%dms]", strconv.Quote(slo.Name), strconv.Quote(model.FormatDuration(slo.BaseWindow())), to.Sub(from).Milliseconds()+1)
	series := map[string]map[int64]*sample{}
	groupLabels := map[string]map[string]string{}
	read := func(name string, set func(s *sample, v float64)) (bool, error) {
		m, err := rp.Matrix(name+sel, to)
		if err != nil {
			return false, err
		}
		for _, s := range m {
			key, lm := groupOf(s.Metric, slo.GroupBy)
			if series[key] == nil {
				series[key] = map[int64]*sample{}
				groupLabels[key] = lm
			}
			for _, p := range s.Floats {
				x := series[key][p.T]
				if x == nil {
					x = &sample{t: p.T}
					series[key][p.T] = x
				}
				set(x, p.F)
			}
		}
		return len(m) > 0, nil
	}
	found, err := read(model.EventsRate, func(s *sample, v float64) { s.n += v })
	if err != nil {
		return nil, err
	}
	if found {
		if _, err := read(model.BadEventsRate, func(s *sample, v float64) { s.k += v }); err != nil {
			return nil, err
		}
	} else if _, err := read(model.ErrorRatio, func(s *sample, v float64) { s.n, s.k = 1, v }); err != nil {
		// A time-averaged SLI records no events: each evaluation's ratio
		// counts the same.
		return nil, err
	}
	budget := slo.ErrorBudget().Float()
	keys := slices.Sorted(maps.Keys(series))
	var out []SLOReport
	for _, key := range keys {
		samples := slices.SortedFunc(maps.Values(series[key]), func(a, b *sample) int { return int(a.t - b.t) })
		r := SLOReport{SLO: slo.Name, Labels: groupLabels[key]}
		n, k := sums(samples, from, to)
		if n > 0 {
			sli := 1 - k/n
			spent := k / n / budget * float64(to.Sub(from)) / float64(slo.Window)
			r.SLI, r.BudgetSpent = &sli, &spent
		}
		for _, kind := range []string{"month", "week", "day"} {
			for p := periodStart(kind, from); p.Before(to); p = periodNext(kind, p) {
				end := periodNext(kind, p)
				lo, hi := render.Later(p, from), render.Earlier(end, to)
				n, k := sums(samples, lo, hi)
				if n == 0 {
					continue
				}
				r.Periods = append(r.Periods, Period{Kind: kind, From: p, To: end, ErrorRatio: k / n,
					Spent: k / n / budget * float64(hi.Sub(lo)) / float64(slo.Window)})
			}
		}
		var hours []Period
		for p := from.Truncate(time.Hour); p.Before(to); p = p.Add(time.Hour) {
			n, k := sums(samples, render.Later(p, from), render.Earlier(p.Add(time.Hour), to))
			if n > 0 && k > 0 {
				hours = append(hours, Period{Kind: "hour", From: p, To: p.Add(time.Hour), ErrorRatio: k / n, Spent: k / n / budget * float64(time.Hour) / float64(slo.Window)})
			}
		}
		slices.SortStableFunc(hours, func(a, b Period) int {
			switch {
			case a.ErrorRatio > b.ErrorRatio:
				return -1
			case a.ErrorRatio < b.ErrorRatio:
				return 1
			}
			return 0
		})
		r.Worst = hours[:min(len(hours), 3)]
		r.Timeline = timeline(samples, from, to, budget, slo.Window)
		if lo, hi, ok := zoomSpan(alerts, r, from, to); ok {
			r.Zoom = timeline(samples, lo, hi, budget, slo.Window)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		out = append(out, SLOReport{SLO: slo.Name, Labels: map[string]string{}})
	}
	return out, nil
}

// zoomSpan is the stretch around a group's first page: six hours before
// it fired, while the burn built up, to two hours after it resolved.
func zoomSpan(alerts []Alert, g SLOReport, from, to time.Time) (time.Time, time.Time, bool) {
	for _, a := range alerts { // sorted by fire time
		if a.SLO != g.SLO || a.Severity != model.PageTier || !sameGroup(a.Labels, g.Labels) {
			continue
		}
		end := to
		if a.ResolvedAt != nil {
			end = render.Earlier(a.ResolvedAt.Add(2*time.Hour), to)
		}
		return render.Later(a.FiredAt.Add(-6*time.Hour), from), end, true
	}
	return time.Time{}, time.Time{}, false
}

// sums adds the samples in [from, to): rates at evaluation times.
func sums(samples []*sample, from, to time.Time) (n, k float64) {
	lo, hi := from.UnixMilli(), to.UnixMilli()
	i, _ := slices.BinarySearchFunc(samples, lo, func(s *sample, t int64) int { return int(s.t - t) })
	for ; i < len(samples) && samples[i].t < hi; i++ {
		n += samples[i].n
		k += samples[i].k
	}
	return n, k
}

func groupOf(lset labels.Labels, by []string) (string, map[string]string) {
	m := map[string]string{}
	var b strings.Builder
	for _, name := range by {
		v := lset.Get(name)
		m[name] = v
		fmt.Fprintf(&b, "%s=%q,", name, v)
	}
	return b.String(), m
}

func periodStart(kind string, t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch kind {
	case "week":
		return day.AddDate(0, 0, -(int(day.Weekday())+6)%7)
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return day
}

func periodNext(kind string, t time.Time) time.Time {
	switch kind {
	case "week":
		return t.AddDate(0, 0, 7)
	case "month":
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Backtest %s to %s (rules evaluated from %s; %d series, %d samples at %s, %d requests, %s read)\n\n",
		r.From.UTC().Format(time.RFC3339), r.To.UTC().Format(time.RFC3339), r.Evaluated.UTC().Format(time.RFC3339),
		r.Stats.Series, r.Stats.Samples, r.Step, r.Stats.Requests, bytesText(r.Stats.BytesRead))
	if r.Stats.Invalid > 0 {
		fmt.Fprintf(tw, "Warning: the server answered %d samples that are NaN, infinite or negative; they were left out, so the SLIs read the other samples only.\n\n", r.Stats.Invalid)
	}
	if len(r.Alerts) == 0 {
		fmt.Fprintln(tw, "No alert fired.")
	} else {
		fmt.Fprintln(tw, "ALERT\tSEVERITY\tSLO\tGROUP\tFIRED\tRESOLVED\tFOR")
		for _, a := range r.Alerts {
			resolved, lasted := "still firing", r.To.Sub(a.FiredAt)
			if a.ResolvedAt != nil {
				resolved, lasted = a.ResolvedAt.UTC().Format(time.RFC3339), a.ResolvedAt.Sub(a.FiredAt)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.AlertName, a.Severity, a.SLO, groupText(a.Labels, r.groupBy(a.SLO)),
				a.FiredAt.UTC().Format(time.RFC3339), resolved, model.FormatDuration(lasted))
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "SLO\tGROUP\tSLI\tBUDGET SPENT\tWORST HOURS (error ratio)")
	for _, s := range r.SLOs {
		sli, spent := "no traffic", "-"
		if s.SLI != nil {
			sli, spent = percent(*s.SLI), percent(*s.BudgetSpent)
		}
		var worst []string
		for _, p := range s.Worst {
			worst = append(worst, fmt.Sprintf("%s %s", p.From.UTC().Format("2006-01-02 15:04"), percent(p.ErrorRatio)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.SLO, groupText(s.Labels, nil), sli, spent, strings.Join(worst, ", "))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "SLO\tGROUP\tPERIOD\tERROR RATIO\tBUDGET SPENT")
	for _, s := range r.SLOs {
		for _, p := range s.Periods {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.SLO, groupText(s.Labels, nil), periodText(p), percent(p.ErrorRatio), percent(p.Spent))
		}
	}
	return tw.Flush()
}

// groupBy is the label names of an SLO's groups, from its report.
func (r *Report) groupBy(slo string) []string {
	for _, s := range r.SLOs {
		if s.SLO == slo {
			return slices.Sorted(maps.Keys(s.Labels))
		}
	}
	return nil
}

func groupText(m map[string]string, only []string) string {
	if only == nil {
		only = slices.Sorted(maps.Keys(m))
	}
	var parts []string
	for _, k := range only {
		// Label values come from the server: one that could break the
		// table (a tab, a line, an escape, a comma) or run long is quoted.
		v := m[k]
		if len(v) > safetext.MaxQuoted || strings.ContainsAny(v, " ,=\"") || strconv.Quote(v) != `"`+v+`"` {
			v = safetext.Quote(v)
		}
		parts = append(parts, fmt.Sprintf("%s=%s", k, v))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

func periodText(p Period) string {
	switch p.Kind {
	case "month":
		return p.From.Format("2006-01")
	case "week":
		y, w := p.From.ISOWeek()
		return fmt.Sprintf("%d-W%02d", y, w)
	}
	return p.From.Format("2006-01-02")
}

func percent(v float64) string { return strconv.FormatFloat(v*100, 'g', 4, 64) + "%" }

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
