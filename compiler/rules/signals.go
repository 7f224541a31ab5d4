package rules

import (
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/templates"
)

// Signals beyond burn rates: the outage tier of the burn alert, the
// queue-backlog early warning and the load-shedding recordings.
const (
	// AlertBacklog warns while the engine's queue holds more waiting
	// requests per replica than the TTFT threshold allows for.
	AlertBacklog = "InferenceQueueBacklog"
	// LoadShed is 1 while a gateway should reject new requests (429), per
	// SLO and group; 0 otherwise.
	LoadShed = "inferslo:load_shed:active"
	// ContextReduce is 1 while a gateway should cut prompts' context, per
	// SLO and group; 0 otherwise.
	ContextReduce = "inferslo:context_reduce:active"
	// ShedQuantile is the TTFT quantile the load-shedding signals compare,
	// recorded once for both.
	ShedQuantile = "inferslo:ttft_quantile:seconds"
)

// outageWindow is the outage tier's window, or 0 without one.
func (b *builder) outageWindow() time.Duration {
	if o := b.slo.Alerting.Outage; o != nil {
		return o.Windows[0].Long
	}
	return 0
}

// outageRecordings records the event rates and error ratio of the outage
// window from raw series, as the base rules do for the base window: the
// outage window is shorter than the base window, so it cannot average it.
func (b *builder) outageRecordings() error {
	w := b.outageWindow()
	if w == 0 || w == b.base {
		return nil
	}
	base := b.base
	b.base = w
	defer func() { b.base = base }()
	if err := b.baseRates(); err != nil {
		return err
	}
	b.record(model.ErrorRatio, fmt.Sprintf("%s / (%s > 0)", b.sel(model.BadEventsRate, w), b.sel(model.EventsRate, w)), b.identity(w))
	return nil
}

// outageAlert pages when (nearly) every request of the outage window
// failed, and the window counted enough requests to say so.
func (b *builder) outageAlert(hold string) error {
	t := b.slo.Alerting.Outage
	if t == nil {
		return nil
	}
	p := t.Windows[0]
	on := b.on(model.LabelSLO)
	cond := fmt.Sprintf("%s > %s\n  and %s\n  %s * %s >= %d", model.BurnRate(b.slo, p.Long), p.Factor, on,
		b.sel(model.EventsRate, p.Long), seconds(p.Long), model.OutageMinEvents)
	if m := b.slo.Alerting.MinEventsPerSecond; !m.IsZero() {
		cond += fmt.Sprintf("\n  and %s\n  %s >= %s", on, b.sel(model.EventsRate, p.Long), m)
	}
	annotations, err := b.annotations(templates.BurnSummary, templates.BurnDescription, b.burnData(*t))
	if err != nil {
		return err
	}
	b.rules = append(b.rules, rulefmt.Rule{
		Alert:       model.AlertBurn,
		Expr:        "max without (window) (\n  " + cond + "\n)\n" + hold,
		For:         prommodel.Duration(t.For),
		Labels:      b.burnLabels(model.OutageTier),
		Annotations: annotations,
	})
	return nil
}

// backlogAlert warns while the mean replica of the SLO's engine and group
// holds more waiting requests than Backlog.PerReplica.
func (b *builder) backlogAlert() error {
	bl, inf := b.slo.Alerting.Backlog, b.slo.Inference
	if bl == nil || inf == nil || inf.Signals.QueueDepth == "" {
		return nil
	}
	sel, err := query.Scoped(inf.Signals.QueueDepth, inf.Selector)
	if err != nil {
		return fmt.Errorf("queue-depth gauge: %w", err)
	}
	avg, err := query.AvgBy(sel, b.slo.GroupBy)
	if err != nil {
		return fmt.Errorf("queue-depth gauge: %w", err)
	}
	data := b.alertData(false)
	data.BacklogPerReplica = bl.PerReplica.String()
	data.BacklogBasis = "as stated in the spec"
	if bl.Derived {
		c := b.slo.Autoscaling.Capacity
		slots := "1 slot"
		if !c.ReplicaConcurrency.IsZero() {
			slots = c.ReplicaConcurrency.String() + " slots"
		}
		data.BacklogBasis = fmt.Sprintf("%s of the queue whose wait alone spends the TTFT threshold: %s × %ss / %s mean service time",
			model.BacklogShare.Percent(), slots, inf.Threshold, model.FormatDuration(c.MeanServiceTime))
	}
	annotations, err := b.annotations(templates.BacklogSummary, templates.BacklogDescription, data)
	if err != nil {
		return err
	}
	b.rules = append(b.rules, rulefmt.Rule{
		Alert:       AlertBacklog,
		Expr:        fmt.Sprintf("%s > %s", avg, bl.PerReplica),
		For:         prommodel.Duration(bl.For),
		Labels:      b.alertLabels(model.TicketTier),
		Annotations: annotations,
	})
	return nil
}

// shedding records the load-shedding signals: 1 while the TTFT quantile of
// the objective (p99 for a 99% target), over the shortest rate window, has
// stayed above factor × threshold at every scrape of the hold, else 0.
// Zero traffic makes the quantile NaN, which compares as 0.
//
// The quantile is recorded once and read by each signal without a hold
// (the two signals usually hold it to the same bound). A hold checks the
// quantile at every scrape, which the recording, at the evaluation
// interval, does not have: those signals compute it in their subquery.
func (b *builder) shedding() {
	sh, inf := b.slo.Alerting.Shedding, b.slo.Inference
	if sh == nil || inf == nil || inf.Role != "ttft" {
		return
	}
	scrape := b.slo.Scrape()
	window := 4 * scrape
	q := query.Percentile(b.slo.Objective.String(), inf.Histogram, inf.Selector, inf.Native, b.slo.GroupBy, model.FormatDuration(window))
	signals := []struct {
		name string
		sig  model.ShedSignal
	}{{LoadShed, sh.Shed}, {ContextReduce, sh.ReduceContext}}
	// The signals carry no window label, nor does the quantile they read.
	id := b.identity(0)
	delete(id, model.LabelWindow)
	recorded := q
	for _, s := range signals {
		if s.sig.For <= scrape {
			b.record(ShedQuantile, q, id)
			recorded = b.sel(ShedQuantile, 0)
			break
		}
	}
	for _, s := range signals {
		bound := inf.NativeThreshold().Mul(s.sig.Factor)
		expr := fmt.Sprintf("%s > bool %s", recorded, bound)
		if s.sig.For > scrape {
			// The quantile moves once a scrape: checking it at every
			// scrape of the hold is all the resolution there is.
			expr = fmt.Sprintf("min_over_time((%s > bool %s)[%s:%s])", q, bound, model.FormatDuration(s.sig.For), model.FormatDuration(scrape))
		}
		b.record(s.name, expr, id)
	}
}
