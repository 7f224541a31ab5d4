package simulate

import (
	"fmt"
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
)

// Interval names the interval a replay-budget problem is about, so the
// front end can point at the spec property that sets it.
type Interval string

// CheckBudget refuses, for `inferslo test`, an SLO whose scenarios together
// would need more than budget rule evaluations, or as many scrapes, at the
// spec's intervals (never more than 100,000), naming the interval that
// would do ("" when none is refused). The spans come from the spec's
// windows, tiers and intervals, as the scenarios derive them.
func CheckBudget(slo model.SLO, budget int64) (Interval, string) {
	budget = min(budget, maxSteps)
	s := &sloSim{slo: slo, opts: Options{}.withDefaults(), eval: slo.Evaluation}
	if s.eval <= 0 {
		s.eval = time.Minute
	}
	if _, ok := s.unproven(); ok {
		return "", ""
	}
	var total, scraped time.Duration
	for _, sc := range s.scenarios() {
		span := time.Duration(0)
		s.planned = &span
		if _, err := sc.run(s); err != nil {
			return "", ""
		}
		total += span
		scraped += span + s.prehistory()
	}
	s.planned = nil
	total, scraped = predict.RoundUp(total, time.Minute), predict.RoundUp(scraped, time.Minute)
	atLeast := func(span time.Duration) string {
		return model.FormatDuration(predict.RoundUp(time.Duration(math.Ceil(float64(span)/float64(budget))), time.Second))
	}
	// What else would do: a larger budget, when the cap allows one.
	orBudget := func(n int64) string {
		if budget < maxSteps && n <= maxSteps {
			return fmt.Sprintf(", a --budget of at least %d", n)
		}
		return ""
	}
	if n := int64(total / s.eval); n > budget {
		return EvaluationInterval, fmt.Sprintf(
			"inferslo test would replay %s of scenarios at the evaluation interval %s: %d rule evaluations, more than the %d it replays per SLO; valid: an evaluation interval of at least %s%s, or shorter alert windows",
			model.FormatDuration(total), model.FormatDuration(s.eval), n, budget, atLeast(total), orBudget(n))
	}
	if n := int64(scraped / s.scrape()); n > budget {
		return ScrapeInterval, fmt.Sprintf(
			"inferslo test would replay %s of scenarios at the scrape interval %s: %d scrapes, more than the %d it replays per SLO; valid: a scrape interval of at least %s%s, or shorter alert windows",
			model.FormatDuration(scraped), model.FormatDuration(s.scrape()), n, budget, atLeast(scraped), orBudget(n))
	}
	return "", ""
}

// checkSteps refuses a scenario whose rule file's interval needs more than
// maxSteps evaluations or scrapes (CheckBudget refuses specs that do, before
// any replay).
func (s *sloSim) checkSteps(end, prehistory time.Duration) error {
	// The day/night scenario is the longest; checking it first thing
	// refuses the SLO before any scenario spends time.
	end = max(end, s.period())
	if s.eval <= 0 || int64(end/s.eval) > maxSteps {
		return fmt.Errorf("%s: slo %s: replaying %s at the rule group's evaluation interval %s needs more than %d evaluations; the rule file's interval must be at least %s",
			s.slo.Source, s.slo.Name, model.FormatDuration(end), s.eval, maxSteps, model.FormatDuration(predict.RoundUp(end/maxSteps+1, time.Second)))
	}
	if n := int64((end + prehistory) / s.scrape()); n > maxSteps {
		return fmt.Errorf("%s: slo %s: replaying %s at the scrape interval %s needs %d scrapes, more than %d; the scrape interval must be at least %s",
			s.slo.Source, s.slo.Name, model.FormatDuration(end+prehistory), s.scrape(), n, maxSteps, model.FormatDuration(predict.RoundUp((end+prehistory)/maxSteps+1, time.Second)))
	}
	return nil
}

// maxSteps bounds the rule evaluations and the scrapes of one SLO's
// scenarios: at the default intervals an SLO needs a few thousand; a day
// replayed at one-second intervals alone needs 86,400 and minutes of CPU,
// and a month at one second would take hours.
const maxSteps = 100_000

// DefaultBudget is the rule evaluations and scrapes a run of `inferslo
// test` or `render` replays per SLO unless told otherwise (--budget): a
// few times what the default intervals need, about a minute of CPU at most.
// maxSteps' 100,000 take minutes per SLO.
const DefaultBudget = 25_000

// MaxBudget is the largest budget a run may be given.
const MaxBudget = maxSteps
