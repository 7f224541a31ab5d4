package simulate

import (
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
)

// periodRatio checks a calendar SLO's period ratio: after about a periodSpan
// cycle of traffic swinging 1.9x, its errors in the quiet part (half to 2.5
// times the budget rate, never a few bad requests that would alias with the
// rate windows), it must equal bad/total counted since the period began
// within 0.1%. The cycle spans exactly the tiles the period ratio keeps
// (from the first evaluation's, when the period began before the run), so
// the rate windows' extrapolation errs alike at both ends and cancels.
func (s *sloSim) periodRatio() (Check, error) {
	base, tile := s.slo.BaseWindow(), irules.PeriodTile(s.slo)
	// firstTile is when the first tile the period ratio keeps begins:
	// period tiles (PeriodTile) are kept when they begin at or after the
	// period start, and hold the base-window tiles recorded in them, from
	// the first evaluation on, each holding the base window before it.
	firstTile := func(start time.Time) time.Duration {
		end := max(start.Sub(prom.Epoch())+tile, 0)
		if r := end % tile; r != 0 {
			end += tile - r
		}
		return max(end-tile, -base)
	}
	start, _ := s.slo.Calendar.Bounds(prom.Epoch().Add(periodSpan))
	lead := firstTile(start)
	// The ratio ends at the last period tile: the cycle runs to one, about
	// periodSpan after the first tile began.
	end := lead + periodSpan
	if r := end % tile; r != 0 {
		end += tile - r
	}
	scale := s.ratioScale()
	load := func(t time.Duration) (float64, float64) {
		phase := math.Cos(2 * math.Pi * float64(t-lead) / float64(end-lead))
		return scale * (1 + 0.9*phase), 1.5 - phase
	}
	label := s.slo.WindowLabel()
	s.only = func(r *rules.RecordingRule) bool {
		return (r.Name() == model.ErrorRatio && r.Labels().Get(model.LabelWindow) == label) || r.Name() == model.PeriodStart
	}
	defer func() { s.only = nil }()
	subject := fmt.Sprintf("%s{%s=%q,%s=%q}", model.ErrorRatio, model.LabelSLO, s.slo.Name, model.LabelWindow, label)
	var c Check
	err := s.run(load, nil, end, nil, func(h *prom.Harness, d *workload.Driver, t time.Duration) error {
		recorded, err := h.Query(model.Selector(model.PeriodStart, s.slo, 0), t)
		if err != nil {
			return err
		}
		if len(recorded) != 1 {
			c = s.check(ScenarioDayNight, model.PeriodStart, "one series", fmt.Sprintf("%d series", len(recorded)), false)
			return nil
		}
		from := firstTile(time.Unix(int64(recorded[0].F), 0))
		truth, ok := d.Truth(from, t)
		weighting := "count-weighted"
		if s.slo.Timeslices != nil {
			truth, ok = s.sliceTruth(d, from, t)
			weighting = "mean of slices"
		}
		if !ok {
			return fmt.Errorf("day/night: no traffic in the calendar period")
		}
		v, err := h.Query(subject, t)
		if err != nil {
			return err
		}
		expected := fmt.Sprintf("%.6g (%s since the period began) ±0.1%%", truth, weighting)
		if len(v) != 1 {
			c = s.check(ScenarioDayNight, subject, expected, fmt.Sprintf("%d series", len(v)), false)
			return nil
		}
		// A period without a bad slice is exactly 0.
		off, observed := math.Abs(v[0].F-truth), fmt.Sprintf("%.6g (exact)", v[0].F)
		if truth > 0 {
			observed = fmt.Sprintf("%.6g (off by %.3f%%)", v[0].F, 100*off/truth)
		}
		c = s.check(ScenarioDayNight, subject, expected, observed, off <= 0.001*truth)
		return nil
	})
	return c, err
}
