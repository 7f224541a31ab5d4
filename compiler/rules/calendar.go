package rules

import (
	"fmt"
	"maps"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// calendar records the SLI and error budget of the calendar period so far.
//
// Each base-window recording holds the events of the base window before it,
// so base-window samples one base window apart tile time without overlap or
// gap. A subquery stepping by a tile over the longest period reads exactly
// those tiles; the filter keeps the tiles that begin at or after the period
// start (read `@ end()`, at the evaluation time), and the sums of the kept
// tiles are the period's event counts times the base window. Their ratio is
// the period's count-weighted error ratio, which restarts from nothing at
// every boundary. Boundaries are exact when they fall on a multiple of the
// tile, as whole-hour, half-hour and quarter-hour offsets do.
//
// The filter compares the tile's own sample time (timestamp()), so it costs
// samples only where tiles exist, but the period start it compares with is
// held once per step: promtool allows 10,000 samples per query, so a period
// longer than maxPeriodSteps base windows (a quarter of five-minute tiles
// is 26,496) steps by a longer tile, each the sum of the base tiles in it.
func (b *builder) calendar() {
	cal := *b.slo.Calendar
	id := maps.Clone(b.identity(0))
	delete(id, model.LabelWindow)
	start, end := periodBounds(cal)
	b.record(model.PeriodStart, start, id)
	b.record(model.PeriodEnd, end, id)

	step := PeriodTile(b.slo)
	tiles := func(fn, inner, name string) string {
		tile := b.sel(name, b.base)
		if step != b.base {
			tile = fmt.Sprintf("%s(%s[%s:%s])", inner, tile, model.FormatDuration(step), model.FormatDuration(b.base))
		}
		keep := fmt.Sprintf("timestamp(%s) - %d >= on () group_left () %s @ end()", tile, int64(step.Seconds()), model.Selector(model.PeriodStart, b.slo, 0))
		return fmt.Sprintf("%s((%s and (%s))[%s:%s])", fn, tile, keep, model.FormatDuration(cal.Longest()), model.FormatDuration(step))
	}
	w := b.periodIdentity()
	ratio := fmt.Sprintf("%s{%s=%q,%s=%q}", model.ErrorRatio, model.LabelSLO, b.slo.Name, model.LabelWindow, cal.Label())
	switch {
	case b.slo.TimeAveraged() && step == b.base:
		// Without event counts (raw ratios, time slices), every tile of
		// the period weighs the same: a slice SLO's tile is one slice.
		b.record(model.ErrorRatio, tiles("avg_over_time", "", model.ErrorRatio), w)
	case b.slo.TimeAveraged():
		// Longer tiles count their base tiles, so each still weighs one.
		b.record(model.ErrorRatio, fmt.Sprintf("%s\n/\n%s", tiles("sum_over_time", "sum_over_time", model.ErrorRatio), tiles("sum_over_time", "count_over_time", model.ErrorRatio)), w)
	default:
		// Zero traffic so far this period leaves the ratio absent, not NaN.
		b.record(model.ErrorRatio, fmt.Sprintf("%s\n/\n(%s > 0)", tiles("sum_over_time", "sum_over_time", model.BadEventsRate), tiles("sum_over_time", "sum_over_time", model.EventsRate)), w)
	}
	b.record(model.BudgetRemaining, fmt.Sprintf("1 - %s / %s", ratio, b.slo.ErrorBudget()), w)
}

// maxPeriodSteps bounds the steps of a period's subquery, below promtool's
// 10,000 samples per query with room for the tiles a test loads.
const maxPeriodSteps = 9000

// PeriodTile is the step of a calendar SLO's period subquery: the base
// window, or when the longest period holds more than maxPeriodSteps of it,
// the shortest
// multiple of it within that bound that divides a quarter hour, so that
// period boundaries (local midnights, on the quarter hour in every zone)
// stay on tile edges; failing that an hour or a day.
func PeriodTile(slo model.SLO) time.Duration {
	longest, base := slo.Calendar.Longest(), slo.BaseWindow()
	if base <= 0 || longest/base <= maxPeriodSteps {
		return base
	}
	for _, whole := range []time.Duration{15 * time.Minute, time.Hour, 24 * time.Hour} {
		for t := base; t <= whole; t += base {
			if whole%t == 0 && longest/t <= maxPeriodSteps {
				return t
			}
		}
	}
	return base
}

func (b *builder) periodIdentity() map[string]string {
	id := maps.Clone(b.identity(0))
	id[model.LabelWindow] = b.slo.Calendar.Label()
	return id
}

// periodBounds returns PromQL for the start and end of the calendar period
// containing the evaluation time, in Unix seconds. PromQL's date functions
// read UTC, so they are given the time shifted by the zone's offset.
func periodBounds(cal model.Calendar) (string, string) {
	if d := int64(cal.Fixed().Seconds()); d > 0 {
		// Periods of fixed length repeat from the anchor; the double modulo
		// keeps the phase positive before the anchor too.
		start := fmt.Sprintf("time() - ((time() - %d) %% %d + %d) %% %d", cal.Anchor.Unix(), d, d, d)
		return fmt.Sprintf("vector(%s)", start), fmt.Sprintf("vector(%s + %d)", start, d)
	}
	local := "time()"
	if cal.Offset != 0 {
		local = fmt.Sprintf("(time() + %d)", cal.Offset)
	}
	at := func(fn string) string { return fmt.Sprintf("%s(vector(%s))", fn, local) }
	midnight := fmt.Sprintf("time() - %s %% 86400", local)
	if cal.Unit == "M" {
		start := fmt.Sprintf("%s - 86400 * (%s - 1)", midnight, at("day_of_month"))
		return start, fmt.Sprintf("%s + 86400 * %s", start, at("days_in_month"))
	}
	// Quarters: the day of the year the quarter began on, and its length in
	// days. Leap years are the years divisible by four, true from 1901 to 2099.
	month := at("month")
	leap := fmt.Sprintf("(%s %% 4 == bool 0)", at("year"))
	first := fmt.Sprintf("(1 + (%s >= bool 4) * (90 + %s) + (%s >= bool 7) * 91 + (%s >= bool 10) * 92)", month, leap, month, month)
	length := fmt.Sprintf("(90 + %s * (%s <= bool 3) + (%s >= bool 4) + (%s >= bool 7))", leap, month, month, month)
	start := fmt.Sprintf("%s - 86400 * (%s - %s)", midnight, at("day_of_year"), first)
	return start, fmt.Sprintf("%s + 86400 * %s", start, length)
}
