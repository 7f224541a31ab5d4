package rules

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// maintenance records the SLO's planned maintenance windows as one series,
// 1 while a window is open and 0 otherwise, ahead of the base rates that
// read it. The expression holds numbers only: the spec's windows arrive
// parsed (minutes, days, offsets, Unix times), never as text.
func (b *builder) maintenance() {
	if len(b.slo.Alerting.Maintenance) == 0 {
		return
	}
	id := maps.Clone(b.identity(0))
	delete(id, model.LabelWindow)
	b.record(model.MaintenanceActive, MaintenanceExpr(b.slo.Alerting.Maintenance), id)
}

// outsideMaintenance leaves the events of a base rate out of every
// evaluation whose rate window touched a maintenance window: the rate is
// multiplied by 0 there. Every longer window, the SLO window's tiles, the
// budget and every burn alert read the base rates, so all of them leave
// the window out; the no-data alert still sees the series (0, not absent).
func (b *builder) outsideMaintenance(expr string) string {
	if len(b.slo.Alerting.Maintenance) == 0 {
		return expr
	}
	return fmt.Sprintf("(%s)\n* on () group_left ()\n(1 - %s)", expr, b.touchedMaintenance())
}

// touchedMaintenance is 1 when a maintenance window was open at any
// evaluation within the base window, one evaluation interval and two
// scrapes: a rate still holds events of the window's last minutes until
// the samples counting them leave its range (rate() extrapolates up to
// about one scrape past the first sample, and the last open evaluation is
// up to one interval before the window closes).
func (b *builder) touchedMaintenance() string {
	tail := b.base + b.slo.Evaluation + 2*b.slo.ScrapeInterval
	return fmt.Sprintf("max_over_time(%s[%s])", b.sel(model.MaintenanceActive, 0), model.FormatDuration(tail))
}

// MaintenanceExpr is PromQL that is 1 while one of the windows is open and
// 0 otherwise, from the evaluation time alone. A recurring window reads the
// local time as UTC shifted by the zone's offset in force (PromQL's date
// functions read UTC): the second of the local day against the start and end, and
// the local day of the week; a window running past midnight is also open
// early on the day after a day it starts on.
func MaintenanceExpr(ms []model.Maintenance) string {
	terms := []string{"vector(0)"}
	for _, m := range ms {
		if !m.Recurring() {
			terms = append(terms, fmt.Sprintf("(time() >= bool %s) * (time() < bool %s)", unixSeconds(m.Start), unixSeconds(m.End)))
			continue
		}
		local := localTime(m)
		secs := fmt.Sprintf("(%s %% 86400)", local)
		start := m.Minute * 60
		end := start + int(m.Duration/time.Second)
		terms = append(terms, fmt.Sprintf("(%s >= bool %d) * (%s < bool %d)%s", secs, start, secs, end, onDays(m.Days, local)))
		if end > 86400 {
			terms = append(terms, fmt.Sprintf("(%s < bool %d)%s", secs, end-86400, onDays(m.Days, shifted(local, -86400))))
		}
	}
	return "clamp_max(" + strings.Join(terms, " + ") + ", 1)"
}

// localTime is the evaluation time shifted by the zone's offset in force:
// the first offset, plus each shift's change once its second has come.
func localTime(m model.Maintenance) string {
	if len(m.Shifts) == 0 {
		return shifted("time()", m.Offset)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "(time() + %d", m.Offset)
	prev := m.Offset
	for _, s := range m.Shifts {
		if d := s.Offset - prev; d >= 0 {
			fmt.Fprintf(&b, " + %d * (time() >= bool %d)", d, s.At)
		} else {
			fmt.Fprintf(&b, " - %d * (time() >= bool %d)", -d, s.At)
		}
		prev = s.Offset
	}
	b.WriteString(")")
	return b.String()
}

// shifted is a time expression plus a number of seconds.
func shifted(expr string, by int) string {
	switch {
	case by > 0:
		return fmt.Sprintf("(%s + %d)", expr, by)
	case by < 0:
		return fmt.Sprintf("(%s - %d)", expr, -by)
	}
	return expr
}

// onDays is the factor that is 1 on the given days of the week of a local
// time, nothing for every day.
func onDays(days []int, local string) string {
	if len(days) == 0 {
		return ""
	}
	var eq []string
	for _, d := range days {
		eq = append(eq, fmt.Sprintf("(day_of_week(vector(%s)) == bool %d)", local, d))
	}
	return " * (" + strings.Join(eq, " + ") + ")"
}

func unixSeconds(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', -1, 64)
}

// outsideMaintenanceRatio leaves a raw ratio SLI's base ratio absent at
// every evaluation whose rate window touched a maintenance window: the
// longer windows average the ratio over the evaluations that remain.
func (b *builder) outsideMaintenanceRatio(expr string) string {
	if len(b.slo.Alerting.Maintenance) == 0 {
		return expr
	}
	return fmt.Sprintf("%s\nunless on ()\n%s > 0", expr, b.touchedMaintenance())
}
