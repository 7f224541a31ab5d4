package rules

import (
	"fmt"
	"maps"
	"math"
	"sort"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
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
// Zero traffic makes the comparison NaN, which compares as 0.
//
// On a classic histogram, below its highest finite bucket, the quantile is
// above the bound B exactly when fewer than the objective's share of the
// requests finished within B, counted as histogram_quantile counts them
// (shedShare), so a signal compares that share: the bucket at B (or the
// two around it) and the count, two or three series a pod instead of every
// bucket, one fewer when the SLO's rules already record the count's rate
// over the same window. The quantile is kept for a native histogram (whose
// quantile reads one series a pod anyway) and a bound at or past the
// highest finite bucket (past which the quantile never rises).
//
// A signal whose expression an earlier signal records reads that
// recording. A hold checks the signal at every scrape, which a recording,
// at the evaluation interval, does not have: those signals compute it in
// their subquery from raw series.
func (b *builder) shedding() error {
	sh, inf := b.slo.Alerting.Shedding, b.slo.Inference
	if sh == nil || inf == nil || inf.Role != "ttft" {
		return nil
	}
	scrape := b.slo.Scrape()
	window := 4 * scrape
	signals := []struct {
		name string
		sig  model.ShedSignal
	}{{LoadShed, sh.Shed}, {ContextReduce, sh.ReduceContext}}
	// The signals carry no window label, nor does the quantile they read.
	id := maps.Clone(b.identity(0))
	delete(id, model.LabelWindow)
	q := query.Percentile(b.slo.Objective.String(), inf.Histogram, inf.Selector, inf.Native, b.slo.GroupBy, model.FormatDuration(window))
	quantile := q
	recorded := map[string]string{} // expression -> the signal recording it
	for _, s := range signals {
		bound := inf.NativeThreshold().Mul(s.sig.Factor)
		sb, ok := ShedBucketsOf(inf, bound)
		if s.sig.For > scrape {
			// The signal moves once a scrape: checking it at every scrape
			// of the hold is all the resolution there is.
			cond := fmt.Sprintf("%s > bool %s", q, bound)
			if ok {
				share, err := b.shedShare(sb, window, false)
				if err != nil {
					return err
				}
				cond = fmt.Sprintf("%s < bool %s", share, b.slo.Objective)
			}
			b.record(s.name, fmt.Sprintf("min_over_time((%s)[%s:%s])", cond, model.FormatDuration(s.sig.For), model.FormatDuration(scrape)), id)
			continue
		}
		var expr string
		if ok {
			share, err := b.shedShare(sb, window, true)
			if err != nil {
				return err
			}
			expr = fmt.Sprintf("%s < bool %s", share, b.slo.Objective)
		} else {
			if quantile == q {
				// Recorded once for every signal that compares it.
				b.record(ShedQuantile, q, id)
				quantile = b.sel(ShedQuantile, 0)
			}
			expr = fmt.Sprintf("%s > bool %s", quantile, bound)
		}
		if name, dup := recorded[expr]; dup {
			b.record(s.name, b.sel(name, 0), id)
			continue
		}
		recorded[expr] = s.name
		b.record(s.name, expr, id)
	}
	return nil
}

// ShedBuckets are the classic histogram's buckets a load-shedding signal's
// bound is read from: the bucket at the bound (Hi), or the two around it (Lo
// unset below the lowest bucket, whose range starts at 0), all in the
// histogram's unit.
type ShedBuckets struct {
	Bound, Lo, Hi model.Decimal
	HasLo         bool
}

// Between says whether the bound lies inside a bucket rather than at one.
func (sb ShedBuckets) Between() bool { return sb.Bound.Cmp(sb.Hi) != 0 }

// ShedBucketsOf are the buckets of inf's histogram a signal at bound (in
// the histogram's unit) reads; false for a native histogram or a bound at
// or past the highest finite bucket, past which the quantile never rises:
// the signal then compares the quantile.
func ShedBucketsOf(inf *model.Inference, bound model.Decimal) (ShedBuckets, bool) {
	if inf.Native || len(inf.Buckets) < 2 || inf.Buckets[0] <= 0 || !sort.Float64sAreSorted(inf.Buckets) {
		return ShedBuckets{}, false
	}
	f := bound.Float()
	last := len(inf.Buckets) - 1
	for i, le := range inf.Buckets {
		if math.Abs(le-f) <= 1e-9*math.Max(math.Abs(le), math.Abs(f)) {
			if i == last {
				break
			}
			return ShedBuckets{Bound: model.DecimalFromFloat(le), Hi: model.DecimalFromFloat(le)}, true
		}
		if le > f {
			sb := ShedBuckets{Bound: bound, Hi: model.DecimalFromFloat(le), HasLo: i > 0}
			if i > 0 {
				sb.Lo = model.DecimalFromFloat(inf.Buckets[i-1])
			}
			return sb, true
		}
	}
	return ShedBuckets{}, false
}

// shedShare is the share of the TTFT histogram's requests over window that
// finished within the bound, as histogram_quantile counts them: inside a
// bucket the requests are spread evenly, so a bound between lo and hi
// counts (hi − bound) / (hi − lo) of lo's requests and the rest of hi's.
// The quantile is above the bound exactly when this share is below the
// objective. With recorded set, the count's rate is read from the SLO's
// events recording of that window when it is the same expression.
func (b *builder) shedShare(sb ShedBuckets, window time.Duration, recorded bool) (string, error) {
	inf := b.slo.Inference
	bucket := func(le model.Decimal) (string, error) {
		m := fmt.Sprintf("le=%q", labels.FormatOpenMetricsFloat(le.Float()))
		return query.RateBy(query.SeriesSelector(inf.Histogram+"_bucket", joinMatchers(m, inf.Selector)), window, b.slo.GroupBy)
	}
	within, err := bucket(sb.Hi)
	if err != nil {
		return "", fmt.Errorf("ttft histogram: %w", err)
	}
	switch {
	case !sb.Between():
	case !sb.HasLo:
		// The lowest bucket's range starts at 0.
		within = fmt.Sprintf("%s * %s / %s", sb.Bound, within, sb.Hi)
	default:
		below, err := bucket(sb.Lo)
		if err != nil {
			return "", fmt.Errorf("ttft histogram: %w", err)
		}
		within = fmt.Sprintf("(%s * %s + %s * %s) / %s", sb.Hi.Sub(sb.Bound), below, sb.Bound.Sub(sb.Lo), within, sb.Hi.Sub(sb.Lo))
	}
	count, err := query.RateBy(query.SeriesSelector(inf.Histogram+"_count", inf.Selector), window, b.slo.GroupBy)
	if err != nil {
		return "", fmt.Errorf("ttft histogram: %w", err)
	}
	if recorded && b.records(model.EventsRate, window, count) {
		return fmt.Sprintf("%s / %s %s", within, b.on(), b.sel(model.EventsRate, window)), nil
	}
	return within + " / " + count, nil
}

// records says whether the group already records expr as name over window.
func (b *builder) records(name string, window time.Duration, expr string) bool {
	w := model.FormatDuration(window)
	for _, r := range b.rules {
		if r.Record == name && r.Labels[model.LabelWindow] == w && r.Expr == expr {
			return true
		}
	}
	return false
}

// joinMatchers joins two matcher lists, either possibly empty.
func joinMatchers(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "," + b
}
