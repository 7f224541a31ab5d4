package keda

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
)

// loadTrigger is the trigger that says how many replicas the traffic needs:
// the slots the load needs, AverageValue against the slots of a replica.
// The load is the TTFT histogram's requests per second over the last two
// scrapes plus its climb over the next minute; the slots are the square-root
// staffing of the capacity plan's model at that load, L + β·√L with
// L = λ × S (see capacity.Result.Reserve): at the plan's peak N replicas
// over the headroom, and relatively more at low load, which carries the
// start of a climb while the replicas asked for start.
//
// The TTFT and queue triggers only know "too few": a share of slow
// requests or a queue does not shrink in proportion to replicas once
// latency holds (prompts slow whatever the load keep the share near its
// floor), so alone they would scale in until latency breaks, and out again.
// Traffic per replica does fall in proportion, so it holds the fleet at the
// size the load needs and scales in only when the load falls.
func loadTrigger(u unit, plan capacity.Result, base func(name, query, metricType string, threshold, activation model.Decimal) trigger) (trigger, bool, error) {
	for _, slo := range u.slos {
		inf := slo.Inference
		if slo.Name != plan.SLO || inf == nil || inf.Histogram == "" {
			continue
		}
		ms := joinMatchers(inf.Selector, groupMatchers(u.group))
		w := model.FormatDuration(triggerWindow(slo))
		// The +Inf bucket counts every request, as the TTFT trigger reads
		// it. irate reads the last two scrapes: a rate over the window
		// lags a climb by half the window, a minute more than a replica
		// takes to start, and the fleet saturates before the replicas it
		// asked for serve. Hundreds of requests a second leave a scrape's
		// count little noise.
		q := fmt.Sprintf("sum(irate(%s[%s]))", selector(inf.Histogram+"_bucket", joinMatchers(ms, `le="+Inf"`)), w)
		if inf.Native {
			q = fmt.Sprintf("histogram_count(sum(irate(%s[%s])))", selector(inf.Histogram, ms), w)
		}
		// A climbing load adds its climb over the next minute, while the
		// replicas asked for now start. A falling load adds nothing (the
		// scale-down stabilization holds the fleet anyway).
		q = fmt.Sprintf("%[1]s + clamp_min(deriv((%[1]s)[%[2]s:%[3]s]) * %[4]d, 0)", q, w, model.FormatDuration(slo.Scrape()), int(loadLead.Seconds()))
		beta := plan.Reserve(u.a.Headroom.Float())
		if plan.Servers < 1 || math.IsNaN(beta) || math.IsInf(beta, 0) {
			return trigger{}, false, nil
		}
		// Erlangs in service at the load, L = λ × S, and their reserve;
		// sum() tells the query check the result is one series.
		l := fmt.Sprintf("(%s) * %s", q, plan.ServiceTime)
		q = fmt.Sprintf("sum(%[1]s + %[2]s * sqrt(%[1]s))", l, strconv.FormatFloat(math.Ceil(beta*1000)/1000, 'f', -1, 64))
		return base("load", q, "AverageValue", model.NewDecimal(int64(plan.Servers), 1), model.NewDecimal(0, 1)), true, nil
	}
	return trigger{}, false, nil
}

// loadLead is how far ahead the load trigger reads a climbing load: about
// what a replica takes to start.
const loadLead = time.Minute
