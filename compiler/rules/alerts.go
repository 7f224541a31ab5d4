package rules

import (
	"fmt"
	"strings"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/templates"
)

func (b *builder) alerts() error {
	al := b.slo.Alerting
	buckets := b.misconfigured()
	hold := ""
	if len(buckets) > 0 {
		hold = "unless " + b.on(model.LabelSLO) + "\n" + b.sel(model.Misconfigured, 0) + "\n"
	}
	for _, t := range al.Tiers {
		var pairs []string
		for _, p := range t.Windows {
			f := p.Factor.String()
			on := b.on(model.LabelSLO)
			cond := fmt.Sprintf("%s > %s\n    and %s\n    %s > %s", model.BurnRate(b.slo, p.Long), f, on, model.BurnRate(b.slo, p.Short), f)
			if !al.MinEventsPerSecond.IsZero() {
				cond += fmt.Sprintf("\n    and %s\n    %s >= %s", on, b.sel(model.EventsRate, p.Long), al.MinEventsPerSecond)
			}
			pairs = append(pairs, "  (\n    "+cond+"\n  )")
		}
		expr := "max without (window) (\n" + strings.Join(pairs, "\n  or "+b.on(model.LabelSLO)+"\n") + "\n)\n" + hold
		annotations, err := b.annotations(templates.BurnSummary, templates.BurnDescription, b.burnData(t))
		if err != nil {
			return err
		}
		b.rules = append(b.rules, rulefmt.Rule{
			Alert:       model.AlertBurn,
			Expr:        expr,
			For:         prommodel.Duration(t.For),
			Labels:      b.burnLabels(t.Severity),
			Annotations: annotations,
		})
	}
	if err := b.outageAlert(hold); err != nil {
		return err
	}
	if err := b.backlogAlert(); err != nil {
		return err
	}
	if len(buckets) > 0 {
		data := b.alertData(false)
		data.Buckets, data.Total = buckets, b.slo.SLI.Total.Expr
		annotations, err := b.annotations(templates.MisconfiguredSummary, templates.MisconfiguredDescription, data)
		if err != nil {
			return err
		}
		b.rules = append(b.rules, rulefmt.Rule{
			Alert:       model.AlertMisconfigured,
			Expr:        b.sel(model.Misconfigured, 0),
			For:         prommodel.Duration(MisconfiguredFor(b.base)),
			Labels:      b.alertLabels(model.TicketTier),
			Annotations: annotations,
		})
	}
	if al.NoData {
		events := b.sel(model.EventsRate, b.base)
		switch {
		case b.slo.SLI.Raw != nil:
			events = b.slo.SLI.Raw.Expr
		case b.slo.SLI.Threshold != nil:
			events = b.sel(model.SliceValue, b.base)
		}
		expr := fmt.Sprintf("absent(%s)", events)
		if len(b.slo.GroupBy) > 0 {
			expr = b.groupsMissing()
		}
		annotations, err := b.annotations(templates.NoDataSummary, templates.NoDataDescription, b.alertData(true))
		if err != nil {
			return err
		}
		b.rules = append(b.rules, rulefmt.Rule{
			Alert:       model.AlertNoData,
			Expr:        expr,
			For:         prommodel.Duration(noDataFor(b.base)),
			Labels:      b.alertLabels(model.TicketTier),
			Annotations: annotations,
		})
	}
	return nil
}

// annotations words an alert's summary and description with the
// templates, and adds the runbook URL when the spec gives one.
func (b *builder) annotations(summary, description string, data templates.Alert) (map[string]string, error) {
	a := map[string]string{}
	for _, kv := range [][2]string{{"summary", summary}, {"description", description}} {
		text, err := b.text.Alert(kv[1], data)
		if err != nil {
			return nil, err
		}
		a[kv[0]] = text
	}
	if b.slo.Alerting.RunbookURL != "" {
		a["runbook_url"] = b.slo.Alerting.RunbookURL
	}
	if b.slo.Alerting.DashboardURL != "" {
		a["dashboard_url"] = b.slo.Alerting.DashboardURL
	}
	return a, nil
}

// alertData is what every alert template may use; with optionalGroup, the
// group is named only when the alert's series carries it.
func (b *builder) alertData(optionalGroup bool) templates.Alert {
	threshold := ""
	if inf := b.slo.Inference; inf != nil && !inf.Threshold.IsZero() {
		threshold = inf.Threshold.String() + "s"
	}
	return templates.Alert{
		SLO:         b.slo.Name,
		DisplayName: b.slo.DisplayName,
		Service:     b.slo.Service.Name,
		Objective:   b.slo.Objective.Percent(),
		Window:      b.slo.WindowText(),
		RunbookURL:  b.slo.Alerting.RunbookURL,
		SLI:         model.SLIName(b.slo),
		Threshold:   threshold,
		SLOTier:     b.slo.SLOTier,
		GroupBy:     b.slo.GroupBy,
		Group:       b.groupText(optionalGroup),
	}
}

// burnData adds a tier's window pairs and the budget query.
func (b *builder) burnData(t model.Tier) templates.Alert {
	data := b.alertData(false)
	data.BurnTier, data.Severity = t.Severity, b.slo.Alerting.SeverityLabel(t.Severity)
	for _, p := range t.Windows {
		data.Windows = append(data.Windows, b.said.window(p, b.slo.Window))
	}
	data.BudgetQuery = b.budgetQuery()
	if ts := b.slo.Timeslices; ts != nil {
		data.TimeSlice, data.SliceAverage = model.FormatDuration(ts.Window), ts.Average
	}
	return data
}

// windowWords remembers what an alert's template data says of a window
// pair in an SLO window: a fleet's SLOs share a few alert tiers, and the
// budget share is exact rational arithmetic, costlier than the lookup.
// Equal keys hold equal values (a Decimal equals another only with the same
// digits, or the same big number). A nil windowWords remembers nothing.
type windowWords map[pairInWindow]templates.Window

type pairInWindow struct {
	pair   model.WindowPair
	window time.Duration
}

func (m windowWords) window(p model.WindowPair, window time.Duration) templates.Window {
	k := pairInWindow{p, window}
	if w, ok := m[k]; ok {
		return w
	}
	w := templates.Window{
		Factor:      p.Factor.String(),
		Long:        model.FormatDuration(p.Long),
		Short:       model.FormatDuration(p.Short),
		BudgetShare: p.BudgetFraction(window).Percent(),
	}
	if m != nil {
		m[k] = w
	}
	return w
}

// groupsMissing is the no-data condition of a grouped SLO: every group seen
// within the SLO window whose base series are gone, and the whole SLI when no
// group was ever seen. The SLO-window recording is the set of groups seen: it
// averages the base series, so it holds a group for a whole window after its
// last sample and never holds a group that never reported.
func (b *builder) groupsMissing() string {
	present := model.EventsRate
	if b.slo.TimeAveraged() {
		present = model.ErrorRatio
	}
	now := b.sel(present, b.base)
	return fmt.Sprintf("group without (window) (\n  %s\n  unless %s\n  %s\n)\nor\nabsent(%s)\n",
		b.sel(present, b.slo.Window), b.on(model.LabelSLO), now, now)
}

// groupText names the alert's group in annotation text, from the alert's
// labels (never from spec text): " for model_name=llama-3-8b". With optional
// set, a series without the labels (the absent() branch) names no group.
func (b *builder) groupText(optional bool) string {
	if len(b.slo.GroupBy) == 0 {
		return ""
	}
	var parts []string
	for _, l := range b.slo.GroupBy {
		parts = append(parts, fmt.Sprintf(`%s={{ index $labels %q }}`, l, l))
	}
	text := " for " + strings.Join(parts, ", ")
	if optional {
		return fmt.Sprintf(`{{ if index $labels %q }}%s{{ end }}`, b.slo.GroupBy[0], text)
	}
	return text
}

// budgetQuery is annotation template code that queries the budget left of
// the alert's own group.
func (b *builder) budgetQuery() string {
	sel := b.sel(model.BudgetRemaining, 0)
	if len(b.slo.GroupBy) == 0 {
		return fmt.Sprintf("printf `%s`", sel)
	}
	var matchers, args []string
	for _, l := range b.slo.GroupBy {
		matchers = append(matchers, l+"=%q")
		args = append(args, fmt.Sprintf("(index $labels %q)", l))
	}
	sel = strings.TrimSuffix(sel, "}") + "," + strings.Join(matchers, ",") + "}"
	return fmt.Sprintf("printf `%s` %s", sel, strings.Join(args, " "))
}

// alertLabels are the labels of every alert of the SLO: the spec's own,
// then identity and severity.
func (b *builder) alertLabels(tier string) map[string]string {
	l := map[string]string{}
	for k, v := range b.slo.Alerting.Labels {
		l[k] = v
	}
	for k, v := range b.identity(0) {
		l[k] = v
	}
	delete(l, model.LabelWindow)
	l[model.LabelSeverity] = b.slo.Alerting.SeverityLabel(tier)
	return l
}

func (b *builder) burnLabels(tier string) map[string]string {
	l := b.alertLabels(tier)
	l[model.LabelBurnTier] = tier
	return l
}

// MisconfiguredFor is how long a threshold bucket must be missing before
// the configuration alert fires: as long as a missing SLI.
func MisconfiguredFor(base time.Duration) time.Duration { return noDataFor(base) }

// noDataFor waits out scrape gaps and restarts before calling the SLI blind.
func noDataFor(base time.Duration) time.Duration {
	if f := 2 * base; f > 10*time.Minute {
		return f
	}
	return 10 * time.Minute
}
