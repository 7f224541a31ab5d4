package simulate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
)

// scenario is one named scenario of an SLO.
type scenario struct {
	name string
	run  func(*sloSim) ([]Check, error)
}

// scenarios lists the scenarios to run, in order.
func (s *sloSim) scenarios() []scenario {
	var out []scenario
	for _, sc := range []scenario{
		{ScenarioHealthy, (*sloSim).healthy}, {ScenarioFastBurn, (*sloSim).fastBurn}, {ScenarioSlowBurn, (*sloSim).slowBurn},
		{ScenarioZeroTraffic, (*sloSim).zeroTraffic}, {ScenarioReset, (*sloSim).counterReset}, {ScenarioDayNight, (*sloSim).dayNight},
		{ScenarioGroupBurn, (*sloSim).groupBurn}, {ScenarioOutage, (*sloSim).outage}, {ScenarioRamp, (*sloSim).ramp},
		{ScenarioMaintenance, (*sloSim).maintenance}, {ScenarioOneIncident, (*sloSim).oneIncident},
		{ScenarioReplay, (*sloSim).traceReplay},
	} {
		if len(s.opts.Scenarios) == 0 || slices.Contains(s.opts.Scenarios, sc.name) {
			out = append(out, sc)
		}
	}
	return out
}

// silence runs a timeline and checks that none of the SLO's alerts fires.
func (s *sloSim) silence(scenario string, load workload.Traffic, restarts workload.Restart, end time.Duration, after func(*prom.Harness, *workload.Driver, time.Duration) error) ([]Check, error) {
	firstFire := map[prom.AlertKey]time.Duration{}
	err := s.run(load, restarts, end, func(t time.Duration, st map[prom.AlertKey]rules.AlertState) bool {
		for k, v := range st {
			if _, seen := firstFire[k]; !seen && v == rules.StateFiring {
				firstFire[k] = t
			}
		}
		return false
	}, after)
	if err != nil {
		return nil, err
	}
	var out []Check
	for _, k := range s.alertsOf() {
		obs, pass := "silent", true
		if t, fired := firstFire[k]; fired {
			obs, pass = "fired at +"+dur(t), false
			if t == 0 {
				obs = "fired at +0s"
			}
		}
		out = append(out, s.check(scenario, k.String(), "silent", obs, pass))
	}
	return out, nil
}

// healthy: half the budget rate for as long as the page tier's longest
// window (at most 2h) plus the longest `for`: no alert may fire. Constant
// traffic looks the same to every window once they hold data, so a longer
// run adds nothing but time.
func (s *sloSim) healthy() ([]Check, error) {
	return s.silence(ScenarioHealthy, workload.Constant(1, workload.HealthyBurn), nil, s.healthySpan(), nil)
}

// healthySpan is how long the healthy scenario runs.
func (s *sloSim) healthySpan() time.Duration {
	span := 2 * time.Hour
	var maxFor time.Duration
	for _, t := range s.slo.Alerting.Tiers {
		if l := predict.Longest(t); l < span && t.Severity == model.PageTier {
			span = l
		}
		if t.For > maxFor {
			maxFor = t.For
		}
	}
	return span + maxFor + s.slo.BaseWindow()
}

// warmup is the healthy history before a burn: the page tier's longest
// window, so page windows start full of healthy data.
func (s *sloSim) warmup() time.Duration {
	if t, ok := predict.TierBySeverity(s.slo, model.PageTier); ok {
		return predict.RoundUp(predict.Longest(t), s.scrape())
	}
	if len(s.slo.Alerting.Tiers) > 0 {
		return predict.RoundUp(s.slo.Alerting.Tiers[0].Windows[0].Short, s.scrape())
	}
	return 0
}

// burnScenario drives healthy traffic for warmup, then burn b until the
// alert of tier fires (or the deadline passes), then healthy again until it
// resolves. It checks the fire delay against the workbook prediction and,
// when resolve is set, the resolve time against its bound; silent lists
// alerts that must not fire at all.
func (s *sloSim) burnScenario(scenario string, tier model.Tier, b float64, resolve bool, silent []prom.AlertKey) ([]Check, error) {
	h := workload.HealthyBurn
	warm := s.warmup()
	detectT, ok := predict.TierDetect(tier, warm, h, b, s.sliceLag(b))
	key := prom.AlertKey{Name: model.AlertBurn, Severity: tier.Severity}
	if !ok {
		return []Check{s.check(scenario, key.String(), "fires", fmt.Sprintf("not checked: no pair of the spec fires at %.4gx", b), false)}, nil
	}
	base := s.slo.BaseWindow()
	if tier.Severity == model.OutageTier {
		// The outage tier reads its own window, not the base window.
		base = tier.Windows[0].Long
	}
	// The run's evaluation interval is only known once the group loads;
	// the spec's stands in for the prediction and the file's for the run.
	eval := s.slo.Evaluation
	eval = cmp.Or(eval, time.Minute)
	predicted := detectT + tier.For + base + eval
	bound := predict.ResolveBound(tier, h, b) + base + eval
	deadline := warm + 2*predicted
	var fired, resolvedAt, recoverAt time.Duration
	var silentFired map[prom.AlertKey]time.Duration
	load := func(t time.Duration) (float64, float64) {
		if t > warm && t <= recoverAt {
			return 1, b
		}
		return 1, h
	}
	end := deadline
	if resolve {
		end += 2 * bound
	}
	// The traffic recovers when the alert fires. A run may store its
	// scrapes ahead of its evaluations (prom.Harness.EvalSpan), so a run
	// burning on finds when; the run then goes on from a copy of its
	// Prometheus at the fire (prom.Harness.CopyAt), the same traffic up to
	// the fire, healthy after it.
	probe := true
	each := func(t time.Duration, st map[prom.AlertKey]rules.AlertState) bool {
		for _, k := range silent {
			if _, seen := silentFired[k]; !seen && st[k] == rules.StateFiring {
				silentFired[k] = t
			}
		}
		switch {
		case fired < 0 && st[key] == rules.StateFiring:
			fired = t
			if probe {
				return true
			}
			if !resolve {
				// Keep burning one `for` of the silent alerts, so a pending
				// one would have time to fire.
				return len(silent) == 0
			}
		case fired < 0 && t >= deadline:
			return true
		case fired >= 0 && resolve && st[key] != rules.StateFiring:
			resolvedAt = t
			return true
		case fired >= 0 && !resolve && t >= fired+s.maxFor():
			return true
		}
		return false
	}
	goesOn := func() bool { return fired >= 0 && (resolve || len(silent) > 0) }
	wentOn := false
	fired, resolvedAt, recoverAt = -1, -1, math.MaxInt64
	silentFired = map[prom.AlertKey]time.Duration{}
	simulated := s.simulated
	// The alert fires by the prediction, when it passes; it resolves
	// within the bound, or the run stops a `for` after the fire.
	s.likelyStops = []time.Duration{warm + predicted}
	defer func() { s.likelyStops = nil }()
	// The first run ends at the fire, or the deadline.
	err := s.run(load, nil, min(end, deadline), each, func(h *prom.Harness, d *workload.Driver, last time.Duration) error {
		if last != fired || !goesOn() {
			return nil
		}
		c, err := h.CopyAt(s.rules, last)
		if err != nil {
			return err
		}
		defer c.Close()
		probe, recoverAt, wentOn = false, fired, true
		s.likelyStops = []time.Duration{fired + s.maxFor()}
		if resolve {
			s.likelyStops = []time.Duration{fired + bound}
		}
		scaled := s.scaled(load)
		return s.steps(c, d.At(c, last, scaled, nil), scaled, nil, last+s.eval, end, each, nil)
	})
	// A plan (s.planned) runs nothing, and asks for the longer run; a
	// run that saw the fire before its own steps (in the healthy history
	// it shares) goes on from the start.
	if err == nil && !wentOn && (s.planned != nil || goesOn()) {
		s.simulated = simulated
		probe, recoverAt = false, fired
		fired, resolvedAt = -1, -1
		silentFired = map[prom.AlertKey]time.Duration{}
		err = s.run(load, nil, end, each, nil)
	}
	if err != nil {
		return nil, err
	}
	expected := fmt.Sprintf("fires within %s of a %.4gx burn", dur(predicted), b)
	if l := predict.Longest(tier); warm < l {
		// Warming windows of days would cost days of evaluations; the
		// prediction matches the replay, and a Prometheus whose windows
		// are full of healthy data takes longer, shown for the reader.
		expected += fmt.Sprintf(" (cold start: %s of healthy history", dur(warm))
		if full, ok := predict.TierDetect(tier, l, h, b, s.sliceLag(b)); ok {
			expected += fmt.Sprintf("; with every window warm %s", dur(full+tier.For+base+eval))
		}
		expected += ")"
	}
	c := s.check(scenario, key.String(), expected, "", false)
	c.Predicted = predicted
	c.observeFire(fired, warm, deadline)
	out := []Check{c}
	if resolve && fired >= 0 {
		r := s.check(scenario, key.String(), fmt.Sprintf("resolves within %s of recovery", dur(bound)), "", false)
		r.ResolveBound = bound
		if resolvedAt < 0 {
			r.Observed = fmt.Sprintf("still firing %s after recovery", dur(end-fired))
		} else {
			r.Resolved = resolvedAt - fired
			r.Pass = r.Resolved <= bound
			r.Observed = "resolved after " + dur(r.Resolved)
		}
		out = append(out, r)
	}
	for _, k := range silent {
		obs, pass := "silent", true
		if t, ok := silentFired[k]; ok {
			obs, pass = "fired after "+dur(t-warm), false
		}
		out = append(out, s.check(scenario, k.String(), "silent", obs, pass))
	}
	return out, nil
}

func (s *sloSim) maxFor() time.Duration {
	var out time.Duration
	for _, t := range s.slo.Alerting.Tiers {
		if t.For > out {
			out = t.For
		}
	}
	return out + s.slo.BaseWindow()
}

// fastBurn: twice the page tier's largest factor (kept below a 100% error
// ratio): the page fires no later than the workbook predicts and resolves
// after the burn stops.
func (s *sloSim) fastBurn() ([]Check, error) {
	page, ok := predict.TierBySeverity(s.slo, model.PageTier)
	if !ok {
		return s.fastBurnWithoutPage()
	}
	return s.burnScenario(ScenarioFastBurn, page, s.fastFactor(predict.Factors(page)), true, s.outageSilent())
}

// fastFactor is twice the largest of a page tier's factors, kept below a
// 100% error ratio, and below the outage tier's factor: a fast burn is
// not an outage.
func (s *sloSim) fastFactor(pageFactors []float64) float64 {
	maxF := pageFactors[len(pageFactors)-1]
	ceiling := 1 / s.budget()
	if o := s.slo.Alerting.Outage; o != nil {
		ceiling = math.Min(ceiling, o.Windows[0].Factor.Float())
	}
	return math.Min(2*maxF, (maxF+ceiling)/2)
}

// fastBurnWithoutPage: an SLO without a page tier (the batch tier) under
// the burn that would page with the workbook's tiers: its ticket fires in
// time and nothing pages. The burn goes on until the ticket fires and one
// `for` longer; how fast a ticket resolves is not checked, as its windows
// take most of a day to drain.
func (s *sloSim) fastBurnWithoutPage() ([]Check, error) {
	ticket, ok := predict.TierBySeverity(s.slo, model.TicketTier)
	if !ok {
		return nil, nil
	}
	page, err := model.WorkbookTiersOf([]string{model.PageTier}, s.slo.Window, 4*s.scrape(), s.slo.Evaluation)
	if err != nil {
		// The workbook's page windows do not fit this SLO; the slow burn
		// still proves the ticket.
		return nil, nil
	}
	b := s.fastFactor(predict.Factors(page[0]))
	return s.burnScenario(ScenarioFastBurn, ticket, b, false, []prom.AlertKey{{Name: model.AlertBurn, Severity: model.PageTier}})
}

// slowBurn: between the ticket tier's largest factor and the page tier's
// smallest (their geometric mean): the ticket fires, the page stays silent.
func (s *sloSim) slowBurn() ([]Check, error) {
	ticket, ok := predict.TierBySeverity(s.slo, model.TicketTier)
	if !ok {
		return nil, nil
	}
	tf := predict.Factors(ticket)
	b := 2 * tf[len(tf)-1]
	var silent []prom.AlertKey
	if page, ok := predict.TierBySeverity(s.slo, model.PageTier); ok {
		pf := predict.Factors(page)
		if pf[0] <= tf[len(tf)-1] {
			return []Check{s.check(ScenarioSlowBurn, "tiers", "page factors above ticket factors",
				fmt.Sprintf("page factor %g <= ticket factor %g", pf[0], tf[len(tf)-1]), false)}, nil
		}
		b = math.Sqrt(pf[0] * tf[len(tf)-1])
		silent = append(silent, prom.AlertKey{Name: model.AlertBurn, Severity: model.PageTier})
	}
	silent = append(silent, s.outageSilent()...)
	b = math.Min(b, (tf[len(tf)-1]+1/s.budget())/2)
	return s.burnScenario(ScenarioSlowBurn, ticket, b, false, silent)
}

// zeroTraffic: healthy, then no requests at all for three hours (counters
// flat, series present), then healthy again. No alert may fire, no recorded
// error ratio may ever be NaN, and every window's ratio must be back at the
// end.
func (s *sloSim) zeroTraffic() ([]Check, error) {
	lead := s.zeroLead()
	quiet := 3 * time.Hour
	end := lead + quiet + lead
	if c := s.slo.Calendar; c != nil {
		// A period that begins near the end has no whole tile yet: the run
		// goes on until it has one, so that its ratio is checked too.
		tile := irules.PeriodTile(s.slo)
		start, _ := c.Bounds(prom.Epoch().Add(end))
		first := start.Sub(prom.Epoch())
		if r := first % tile; r != 0 {
			first += tile - r
		}
		end = max(end, first+tile)
	}
	load := func(t time.Duration) (float64, float64) {
		if t > lead && t <= lead+quiet {
			return 0, 0
		}
		return 1, workload.HealthyBurn
	}
	var nan Check
	after := func(h *prom.Harness, d *workload.Driver, t time.Duration) error {
		sel := model.Selector(model.ErrorRatio, s.slo, 0)
		m, err := h.QueryMatrix(fmt.Sprintf("%s[%s]", sel, model.FormatDuration(t+time.Minute)), t)
		if err != nil {
			return err
		}
		nans, samples := 0, 0
		for _, series := range m {
			for _, p := range series.Floats {
				samples++
				if math.IsNaN(p.F) {
					nans++
				}
			}
		}
		v, err := h.Query(sel, t)
		if err != nil {
			return err
		}
		want := len(s.slo.Windows())
		if o := s.slo.Alerting.Outage; o != nil && o.Windows[0].Long != s.slo.BaseWindow() {
			want++ // the outage tier's own window
		}
		if s.slo.Calendar != nil {
			want++ // the calendar period so far
		}
		nan = s.check(ScenarioZeroTraffic, model.ErrorRatio, fmt.Sprintf("no NaN; all %d windows recorded after traffic returns", want),
			fmt.Sprintf("%d NaN in %d samples; %d windows recorded", nans, samples, len(v)), nans == 0 && len(v) == want)
		return nil
	}
	out, err := s.silence(ScenarioZeroTraffic, load, nil, end, after)
	if err != nil {
		return nil, err
	}
	return append(out, nan), nil
}

// zeroLead is the healthy traffic before and after the zero-traffic
// scenario's quiet hours.
func (s *sloSim) zeroLead() time.Duration { return max(time.Hour, 2*s.slo.BaseWindow()) }

// counterReset: healthy traffic while two pods restart (one misses a
// scrape and its counters start from zero again): no alert.
func (s *sloSim) counterReset() ([]Check, error) {
	span := s.resetSpan()
	scrape := s.scrape()
	// The first scrape at or after each restart time finds the pod down.
	at := func(when, t time.Duration) bool { return t >= when && t < when+scrape }
	restarts := func(pod int, t time.Duration) bool {
		return (pod == 0 && at(span/2, t)) || (pod == 1 && at(span*3/4, t))
	}
	return s.silence(ScenarioReset, workload.Constant(1, workload.HealthyBurn), restarts, span, nil)
}

// resetSpan is how long the counter-reset scenario runs; pods restart at
// half and three quarters of it.
func (s *sloSim) resetSpan() time.Duration { return 2 * time.Hour }

// dayNight: one period of day/night traffic (a day, or the SLO window if
// shorter), 1.8x swing between peak and trough, with errors concentrated in
// the quiet hours. Over one whole period the recorded SLO-window ratio must
// equal bad/total counted over the period within 0.1% (relative). The
// evaluations cover exactly one period, so the rate windows' overlap at
// both ends falls on the same phase of the cycle and cancels; windows longer
// than the simulated span (28d) count what exists, as in a fresh
// Prometheus; a window built from hourly tiles is read at a whole hour, a
// period after the first evaluation. The time-average of ratios is shown
// for contrast.
func (s *sloSim) dayNight() ([]Check, error) {
	period := s.period()
	cycle := func(t time.Duration) float64 { return math.Cos(2 * math.Pi * float64(t) / float64(period)) }
	scale := s.ratioScale()
	load := func(t time.Duration) (float64, float64) {
		quiet := (1 - cycle(t)) / 2
		burn := 0.05 + 1.9*quiet*quiet*quiet
		return scale * (1 + 0.9*cycle(t)), burn
	}
	// Only the SLO-window ratio and what it reads are evaluated: the
	// alerts play no part here, and the run is several times faster.
	window := model.FormatDuration(s.slo.Window)
	s.only = func(r *rules.RecordingRule) bool {
		return r.Name() == model.ErrorRatio && r.Labels().Get(model.LabelWindow) == window
	}
	defer func() { s.only = nil }()
	var c Check
	// Rules chained for a ruler's limit read an earlier part's recordings
	// late: the ratio read lag later is the period's.
	lag, err := s.lag(func(r rulefmt.Rule) bool {
		return r.Record == model.ErrorRatio && r.Labels[model.LabelWindow] == window
	})
	if err != nil {
		return nil, err
	}
	run := func() error {
		// A window built from tiles ends at the last whole tile: the run
		// ends on one, a period after the first evaluation.
		end := period - s.evalOrDefault()
		if irules.TileWindow(s.slo) > 0 {
			end = period
		}
		return s.run(load, nil, end+lag, nil, func(h *prom.Harness, d *workload.Driver, t time.Duration) error {
			v, err := h.Query(model.Selector(model.ErrorRatio, s.slo, s.slo.Window), t)
			if err != nil {
				return err
			}
			t -= lag
			truth, ok := d.Truth(-s.evalOrDefault(), t)
			weighting := "count-weighted"
			if s.slo.Timeslices != nil {
				truth, ok = s.sliceTruth(d, math.MinInt64, t)
				weighting = "mean of slices"
			}
			if !ok {
				return fmt.Errorf("day/night: no traffic in the period")
			}
			subject := model.Selector(model.ErrorRatio, s.slo, s.slo.Window)
			expected := fmt.Sprintf("%.6g (%s) ±0.1%%", truth, weighting)
			if len(v) != 1 {
				c = s.check(ScenarioDayNight, subject, expected, fmt.Sprintf("%d series", len(v)), false)
				return nil
			}
			got := v[0].F
			rel := math.Abs(got-truth) / truth
			avg := s.timeAverage(load, period)
			c = s.check(ScenarioDayNight, subject, expected,
				fmt.Sprintf("%.6g (off by %.3f%%; an average of ratios would give %.4g)", got, 100*rel, avg), rel <= 0.001)
			return nil
		})
	}
	if err := run(); err != nil {
		return nil, err
	}
	if s.slo.Calendar == nil {
		return []Check{c}, nil
	}
	p, err := s.periodRatio()
	if err != nil {
		return nil, err
	}
	return []Check{c, p}, nil
}

// ratioScale scales the load of the ratio checks for enough traffic for
// dozens of bad requests per pod and scrape: whole counts of a few errors
// alias with the rate windows' sub-minute weighting and would blur the 0.1%
// comparison.
func (s *sloSim) ratioScale() float64 {
	return math.Max(1, 50/(s.opts.RPS*s.budget()*s.scrape().Seconds()))
}

// period is the day/night scenario's span: a day, or the SLO window if
// shorter.
func (s *sloSim) period() time.Duration { return min(24*time.Hour, s.slo.Window) }

func (s *sloSim) evalOrDefault() time.Duration {
	if s.slo.Evaluation > 0 {
		return s.slo.Evaluation
	}
	return time.Minute
}

// timeAverage is the error ratio averaged over time, each minute weighing
// the same: what an average of ratios would record.
func (s *sloSim) timeAverage(load workload.Traffic, period time.Duration) float64 {
	sum, n := 0.0, 0
	for t := time.Duration(0); t < period; t += time.Minute {
		_, burn := load(t)
		sum += burn * s.budget()
		n++
	}
	return sum / float64(n)
}
