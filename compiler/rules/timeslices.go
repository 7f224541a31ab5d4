package rules

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler/model"
)

// sliceRecordings handles a time-slice SLO. The group evaluates once per
// slice, so each sample of the slice-window series is one slice and slices
// tile time. The slice's error is 1 for a bad slice and 0 for a good one
// (Timeslices), or the slice's own bad/total ratio (RatioTimeslices), an
// average by definition rather than one weighted by events. Every longer
// window averages it, so
// the error ratio of a window is its share of bad slices (or the mean slice
// ratio), and burn rates and alerts follow as for events. A slice without
// traffic has no SLI and no error sample: it is left out of every average.
func (b *builder) sliceRecordings() error {
	ts := b.slo.Timeslices
	slice := b.base
	value := b.sel(model.SliceValue, slice)
	var bad string
	if th := b.slo.SLI.Threshold; th != nil && ts.Evaluation > 0 {
		// The slice's value is the share of its evaluations, one every
		// ts.Evaluation, whose value meets the threshold. A subquery's
		// steps are whole multiples of its step, so the slice holds
		// slice/step of them wherever the group's evaluations fall. An
		// evaluation without traffic (a NaN percentile) is left out.
		q := th.Query.Expr
		b.record(model.SliceValue, fmt.Sprintf("avg_over_time(((%s == %s) %s bool %s)[%s:%s])",
			q, q, th.Op, th.Value, model.FormatDuration(slice), model.FormatDuration(ts.Evaluation)), b.identity(slice))
		bad = fmt.Sprintf("%s < bool %s", value, ts.Target)
	} else if th != nil {
		b.record(model.SliceValue, th.Query.Expr, b.identity(slice))
		// A slice without traffic has a NaN percentile, which no
		// comparison meets: `v == v` drops it instead of counting it good.
		bad = fmt.Sprintf("(%s %s bool %s) and %s == %s", value, negation[th.Op], th.Value, value, value)
	} else {
		if err := b.baseRates(); err != nil {
			return err
		}
		ratio := fmt.Sprintf("%s / (%s > 0)", b.sel(model.BadEventsRate, slice), b.sel(model.EventsRate, slice))
		b.record(model.SliceValue, "1 - "+ratio, b.identity(slice))
		bad = ratio
		if !ts.Average {
			bad = fmt.Sprintf("%s < bool %s", value, ts.Target)
		}
	}
	b.record(model.SliceError, bad, b.identity(slice))
	// The slice window's error ratio is the slice's own error; every
	// longer window averages the slices it holds.
	b.record(model.ErrorRatio, b.sel(model.SliceError, slice), b.identity(slice))
	b.averageWindows(model.SliceError)
	return nil
}

// negation is the comparison a bad value meets, per good comparison.
var negation = map[string]string{"<=": ">", "<": ">=", ">=": "<", ">": "<="}
