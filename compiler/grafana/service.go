package grafana

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	pq "github.com/inferslo/inferslo/compiler/query"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/templates"
)

// latencyRoles are the inference roles drawn as percentile panels, in order.
func latencyRoles() []string { return []string{"ttft", "itl", "tpot", "e2e", "queue"} }

// serviceDashboard draws one service: a summary, latency percentiles, one
// row per SLO (budget, error ratio, burn rate) and traffic and engine load.
func serviceDashboard(service string, slos []model.SLO, w *words, q *queries) (dashboard, error) {
	title := service
	if dn := slos[0].Service.DisplayName; dn != "" && dn != service {
		title = dn
	}
	d := newDashboard(UID(service), "SLOs: "+title, []string{"inferslo", "slo", service}, slos)
	vars, err := serviceVariables(service, slos, q)
	if err != nil {
		return dashboard{}, err
	}
	d.Templating.List = append(d.Templating.List, vars...)
	serviceMatcher := fmt.Sprintf("%s=%q", model.LabelService, service)
	d.Annotations.List = append(d.Annotations.List, alertAnnotation(serviceMatcher, groupLabels(slos)))
	if hasMaintenance(slos) {
		d.Annotations.List = append(d.Annotations.List, maintenanceAnnotation(serviceMatcher))
	}

	var g grid
	about := mdText(generatedHeader(slos)) + "\n\n"
	if desc := slos[0].Service.Description; desc != "" {
		about += mdText(desc) + "\n\n"
	}
	about += sloTable(slos, false, w.pairs)
	g.add(textPanel("About these SLOs", w.say(templates.PanelAbout, templates.Panel{}), about), gridWidth, 4+2*len(slos))

	g.row("Summary")
	g.add(budgetStat(w, slos, true), 12, 7)
	g.add(alertsPanel(w, serviceMatcher, groupLabels(slos), "Alerts on this service's SLOs"), 12, 7)

	for _, src := range latencySources(slos) {
		var latency []panel
		for _, role := range latencyRoles() {
			if p, ok := latencyPanel(w, role, src); ok {
				latency = append(latency, p)
			}
		}
		if len(latency) > 0 {
			g.row(src.title())
			for _, p := range latency {
				g.add(p, 12, 8)
			}
		}
	}

	if goodput := goodputPanels(w, slos); len(goodput) > 0 {
		g.row("Goodput")
		for _, p := range goodput {
			g.add(p, 12, 8)
		}
	}

	for _, slo := range slos {
		g.row(fmt.Sprintf("SLO %s: %s, %s over %s", sloTitle(slo), sliText(slo), percent(slo.Objective), slo.WindowText()))
		if slo.Calendar != nil {
			for _, p := range periodStats(w, slo) {
				g.add(p, 12, 4)
			}
		}
		if slo.Timeslices != nil {
			g.add(sliceValuePanel(slo), gridWidth, 8)
		}
		g.add(budgetSeries(w, slo), 8, 8)
		if slo.Timeslices != nil {
			g.add(goodSlicesPanel(slo), 8, 8)
		} else {
			g.add(errorRatioPanel(w, slo), 8, 8)
		}
		g.add(burnRatePanel(w, slo), 8, 8)
	}

	var load []panel
	if p, ok := throughputPanel(w, slos); ok {
		load = append(load, p)
	}
	load = append(load, enginePanels(w, slos)...)
	if len(load) > 0 {
		g.row("Traffic and engine load")
		for _, p := range load {
			g.add(p, 12, 8)
		}
	}
	d.Panels = g.items
	if w.err != nil {
		return dashboard{}, w.err
	}
	return d, nil
}

// inferenceSLOs returns the SLOs that carry engine facts.
func inferenceSLOs(slos []model.SLO) []model.SLO {
	var out []model.SLO
	for _, s := range slos {
		if s.Inference != nil {
			out = append(out, s)
		}
	}
	return out
}

// serviceVariables adds one query variable per label a reader may narrow
// the service's panels by: the selector and grouping labels of its SLOs,
// and instance. Each lists the values inside the specs' own scope, so a
// reader can narrow a panel but never widen it: a grouping label's values
// come from the service's SLO recordings, which keep every group of every
// spec and engine; a selector label's and instance's from each engine's
// series within its spec's selector. A label several sources carry lists
// the union of their values.
func serviceVariables(service string, slos []model.SLO, q *queries) ([]variable, error) {
	var labels []string
	sources := map[string][]string{}
	add := func(label, series string) {
		if _, ok := sources[label]; !ok {
			labels = append(labels, label)
		}
		if !slices.Contains(sources[label], series) {
			sources[label] = append(sources[label], series)
		}
	}
	// Recordings keep the grouping labels and drop the rest.
	recordings := fmt.Sprintf("%s{%s=%q}", model.BudgetRemaining, model.LabelService, service)
	for _, slo := range slos {
		for _, l := range slo.GroupBy {
			if usableVariable(l) {
				add(l, recordings)
			}
		}
		if slo.Inference == nil {
			continue
		}
		probe := probeMetric(slo.Inference)
		if probe == "" {
			continue
		}
		series := pq.SeriesSelector(probe, strings.TrimSpace(slo.Inference.Selector))
		if err := q.parses(series); err != nil {
			return nil, fmt.Errorf("selector of SLO %s: %w", slo.Name, err)
		}
		for _, l := range varLabels(slo) {
			if !slices.Contains(slo.GroupBy, l) {
				add(l, series)
			}
		}
	}
	var out []variable
	for _, l := range labels {
		v := labelVariable(l, sources[l])
		if err := q.parses(v.probe); err != nil {
			return nil, fmt.Errorf("variable %s: %w", l, err)
		}
		out = append(out, v.variable)
	}
	return out, nil
}

// probedVariable is a variable and the PromQL its values are read from.
type probedVariable struct {
	variable
	probe string
}

// labelVariable lets a reader pick values of a label among those of the
// series given, all of them by default. One selector lists its values with
// label_values; several, with the values of the union of their series.
func labelVariable(label string, series []string) probedVariable {
	probe := series[0]
	q := fmt.Sprintf("label_values(%s, %s)", probe, label)
	regex := ""
	if len(series) > 1 {
		parts := make([]string, len(series))
		for i, s := range series {
			parts[i] = fmt.Sprintf("count by (%s) (%s)", label, s)
		}
		probe = strings.Join(parts, " or ")
		q = fmt.Sprintf("query_result(%s)", probe)
		// Each result line reads {label="value"} count timestamp.
		regex = fmt.Sprintf(`/%s="([^"]*)"/`, label)
	}
	return probedVariable{probe: probe, variable: variable{
		Type:       "query",
		Name:       label,
		Label:      label,
		Query:      q,
		Datasource: ptr(promDS()),
		Definition: q,
		Regex:      regex,
		Current:    &option{Text: "All", Value: "$__all"},
		Refresh:    2, // on time-range change: replicas come and go
		Multi:      true,
		IncludeAll: true,
		AllValue:   ".*",
		Sort:       1,
	}}
}

// budgetStat shows the budget left of every SLO, and of every group of a
// grouped SLO; narrow applies the dashboard's group variables.
func budgetStat(w *words, slos []model.SLO, narrow bool) panel {
	var ts []target
	for _, s := range slos {
		ts = append(ts, query(narrowed(model.BudgetQuery(s), s, narrow), seriesLegend(s, s.Name)))
	}
	return budgetStatOf(w, ts)
}

// budgetStatOf draws the budget left of the SLOs the targets select.
func budgetStatOf(w *words, ts []target) panel {
	return statPanel("Error budget remaining", w.say(templates.PanelBudgetLeft, templates.Panel{Metric: model.BudgetRemaining}),
		"percentunit", ts,
		steps(colorRed, step{Value: num("0"), Color: colorOrange}, step{Value: num("0.25"), Color: colorGreen}))
}

// alertsPanel shows the SLO alerts firing, one series per alert and group.
func alertsPanel(w *words, matcher string, groups []string, title string) panel {
	return timeseriesPanel(title,
		w.say(templates.PanelAlerts, templates.Panel{Metric: "ALERTS", BurnAlert: model.AlertBurn, NoDataAlert: model.AlertNoData}),
		[]target{query(alertsQuery(matcher, groups), "{{alertname}} {{severity}} {{slo}}"+groupLegend(groups))},
		seriesSpec{unit: "none", min: num("0"), stepped: true, noValue: "no SLO alert firing"})
}

// latencySource is one set of engine series a service's SLOs read: one
// engine (and version), one selector, one grouping. Each gets a row of
// latency panels, so SLOs on different engines or models never share a
// percentile line.
type latencySource struct {
	// first is the source's first SLO reading a histogram, else its
	// first: its engine facts, selector and grouping are every one's.
	first model.SLO
	slos  []model.SLO
}

// latencySources lists the engine series the service's inference SLOs
// read, in SLO order.
func latencySources(slos []model.SLO) []latencySource {
	var out []latencySource
	index := map[string]int{}
	for _, s := range inferenceSLOs(slos) {
		inf := s.Inference
		key := strings.Join([]string{inf.Engine, inf.EngineVersion, strings.TrimSpace(inf.Selector), strings.Join(s.GroupBy, ",")}, "\x00")
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, latencySource{first: s})
		}
		// Only an SLO that reads a histogram knows whether the spec's
		// histograms are native.
		if out[i].first.Inference.Histogram == "" && inf.Histogram != "" {
			out[i].first = s
		}
		out[i].slos = append(out[i].slos, s)
	}
	return out
}

// title names the row: the engine, its selector and its grouping.
func (src latencySource) title() string {
	t := "Latency on " + src.scope()
	if len(src.first.GroupBy) > 0 {
		t += " per " + strings.Join(src.first.GroupBy, ", ")
	}
	return t
}

// scope names the series of a source: the engine and its selector.
func (src latencySource) scope() string {
	inf := src.first.Inference
	t := engineTitle(inf)
	if inf.EngineVersion != "" {
		t += " " + inf.EngineVersion
	}
	if sel := strings.TrimSpace(inf.Selector); sel != "" {
		t += " {" + sel + "}"
	}
	return t
}

// latencyPanel draws p50/p95/p99 of one latency role of one source, one
// set per group of a grouped source, with the threshold of every SLO of
// the source on that role as a line. TTFT is drawn whenever the engine
// exposes it; the other roles only when an SLO uses them.
func latencyPanel(w *words, role string, src latencySource) (panel, bool) {
	var withRole []model.SLO
	for _, s := range src.slos {
		if s.Inference.Role == role && s.Inference.Histogram != "" {
			withRole = append(withRole, s)
		}
	}
	inf := src.first.Inference
	var histogram string
	switch {
	case len(withRole) > 0:
		histogram = withRole[0].Inference.Histogram
	case role == "ttft":
		histogram = inf.Signals.TTFT
	}
	if histogram == "" {
		return panel{}, false
	}
	var ts []target
	for _, p := range percentiles() {
		ts = append(ts, query(percentileQuery(p.q, histogram, rawSelector(src.first), inf.Native, src.first.GroupBy), seriesLegend(src.first, p.name)))
	}
	// One line per distinct threshold: two SLOs may bound the same latency
	// at different targets.
	var marks []step
	var promises []templates.Promise
	seen := map[string]bool{}
	sort.SliceStable(withRole, func(i, j int) bool {
		return withRole[i].Inference.Threshold.Cmp(withRole[j].Inference.Threshold) < 0
	})
	// Quantiles come out in the histogram's own unit (milliseconds on
	// Triton), and so do the threshold lines.
	unit, unitName := "s", "s"
	if inf.Signals.Units[histogram] == "milliseconds" {
		unit, unitName = "ms", "ms"
	}
	for _, s := range withRole {
		t := s.Inference.Threshold.Mul(model.NewDecimal(model.UnitsPerSecond(inf.Signals.Units[histogram]), 1)).String()
		promises = append(promises, templates.Promise{SLO: s.Name, Objective: percent(s.Objective), Threshold: t + unitName, Window: dur(s.Window)})
		if !seen[t] {
			seen[t] = true
			marks = append(marks, step{Value: num(t), Color: colorRed})
		}
	}
	desc := w.say(templates.PanelLatency, templates.Panel{
		Role: role, RoleTitle: strings.ToLower(roleTitle(role)), Histogram: histogram, Metric: histogram, Promises: promises,
	})
	return timeseriesPanel(roleTitle(role)+" (p50, p95, p99)", desc, ts,
		seriesSpec{unit: unit, min: num("0"), thresholds: steps(colorGreen, marks...), thresholdStyle: "line"}), true
}

// budgetSeries is the budget left of one SLO over time.
func budgetSeries(w *words, slo model.SLO) panel {
	if slo.Calendar != nil {
		return periodBudgetSeries(w, slo)
	}
	return timeseriesPanel("Error budget remaining over "+dur(slo.Window),
		w.say(templates.PanelBudgetHistory, w.sloData(slo, model.BudgetRemaining)),
		[]target{query(narrowed(model.BudgetQuery(slo), slo, true), seriesLegend(slo, "budget remaining"))},
		seriesSpec{unit: "percentunit", thresholds: steps(colorRed, step{Value: num("0"), Color: colorGreen}), thresholdStyle: "line"})
}

// errorRatioPanel is the bad-event ratio at the base and the SLO window
// against the ratio the objective allows.
func errorRatioPanel(w *words, slo model.SLO) panel {
	budget := slo.ErrorBudget()
	var ts []target
	for _, w := range []time.Duration{slo.BaseWindow(), slo.Window} {
		if len(ts) > 0 && w == slo.BaseWindow() {
			continue
		}
		ts = append(ts, query(recorded(model.ErrorRatio, slo, w, true), seriesLegend(slo, "error ratio over "+dur(w))))
	}
	return timeseriesPanel("Error ratio", w.say(templates.PanelErrorRatio, w.sloData(slo, model.ErrorRatio)), ts,
		seriesSpec{unit: "percentunit", min: num("0"), thresholds: steps(colorGreen, step{Value: num(budget.String()), Color: colorRed}), thresholdStyle: "line"})
}

// burnRatePanel draws the burn rate over every alert window with each tier's
// factor as a dashed line: red for page, orange for ticket.
func burnRatePanel(w *words, slo model.SLO) panel {
	var ts []target
	for _, w := range windowsOfTiers(slo) {
		burn := recorded(model.ErrorRatio, slo, w, true) + " / " + slo.ErrorBudget().String()
		ts = append(ts, query(burn, seriesLegend(slo, "burn rate over "+dur(w))))
	}
	colors := map[string]string{}
	var factors []model.Decimal
	for _, t := range slo.Alerting.Tiers {
		for _, p := range t.Windows {
			f := p.Factor.String()
			if _, ok := colors[f]; !ok {
				factors = append(factors, p.Factor)
				colors[f] = colorOrange
			}
			if t.Severity == model.PageTier {
				colors[f] = colorRed
			}
		}
	}
	sort.Slice(factors, func(i, j int) bool { return factors[i].Cmp(factors[j]) < 0 })
	var marks []step
	for _, f := range factors {
		marks = append(marks, step{Value: num(f.String()), Color: colors[f.String()]})
	}
	return timeseriesPanel("Burn rate", w.say(templates.PanelBurnRate, w.sloData(slo, model.ErrorRatio)), ts,
		seriesSpec{unit: "none", min: num("0"), thresholds: steps(colorGreen, marks...), thresholdStyle: "dashed"})
}

// throughputPanel is the recorded events rate of each SLO: requests per
// second for inference SLOs. SLIs that yield a ratio or a threshold value
// directly record no event counts, and an ITL SLI counts decode steps (one per generated
// token, not per request), so neither has a line here.
func throughputPanel(w *words, slos []model.SLO) (panel, bool) {
	var ts []target
	for _, s := range slos {
		perToken := s.Inference != nil && s.Inference.Role == "itl"
		if s.SLI.Raw == nil && s.SLI.Threshold == nil && !perToken {
			ts = append(ts, query(recorded(model.EventsRate, s, s.BaseWindow(), true), seriesLegend(s, s.Name)))
		}
	}
	if len(ts) == 0 {
		return panel{}, false
	}
	title := "Event throughput"
	if len(inferenceSLOs(slos)) > 0 {
		title = "Request throughput"
	}
	return timeseriesPanel(title, w.say(templates.PanelThroughput, templates.Panel{Metric: model.EventsRate}),
		ts, seriesSpec{unit: "reqps", min: num("0")}), true
}

// enginePanels draws token throughput, queue depth and KV-cache usage when
// the engines expose them, one series per engine and selector the service's
// specs read, each named by its source when there are several; these read
// raw engine series, no rule records them.
func enginePanels(w *words, slos []model.SLO) []panel {
	srcs := latencySources(slos)
	// targets collects one panel's queries: each source's, once each.
	targets := func(each func(src latencySource, add func(expr, legend string))) []target {
		var ts []target
		seen := map[string]bool{}
		for _, src := range srcs {
			each(src, func(expr, legend string) {
				if seen[expr] {
					return
				}
				seen[expr] = true
				if len(srcs) > 1 && !strings.HasPrefix(legend, "{{") {
					legend += " " + src.scope()
				}
				ts = append(ts, query(expr, legend))
			})
		}
		return ts
	}
	var out []panel
	if ts := targets(func(src latencySource, add func(string, string)) {
		sig, sel := src.first.Inference.Signals, rawSelector(src.first)
		if c := sig.PromptTokens; c != "" {
			add(counterRateQuery(c, sel, src.first.GroupBy), seriesLegend(src.first, "prompt tokens/s"))
		}
		if c := sig.GenerationTokens; c != "" {
			add(counterRateQuery(c, sel, src.first.GroupBy), seriesLegend(src.first, "generated tokens/s"))
		}
	}); len(ts) > 0 {
		out = append(out, timeseriesPanel("Token throughput", w.say(templates.PanelTokens, templates.Panel{}),
			ts, seriesSpec{unit: "suffix: tok/s", min: num("0")}))
	}
	if ts := targets(func(src latencySource, add func(string, string)) {
		sig, sel := src.first.Inference.Signals, rawSelector(src.first)
		if g := sig.QueueDepth; g != "" {
			add(gaugeSumQuery(g, sel, src.first.GroupBy), seriesLegend(src.first, "waiting"))
		}
		if g := sig.Running; g != "" {
			add(gaugeSumQuery(g, sel, src.first.GroupBy), seriesLegend(src.first, "running"))
		}
	}); len(ts) > 0 {
		out = append(out, timeseriesPanel("Queue depth", w.say(templates.PanelQueue, templates.Panel{}),
			ts, seriesSpec{unit: "short", min: num("0")}))
	}
	var kv string
	if ts := targets(func(src latencySource, add func(string, string)) {
		if g := src.first.Inference.Signals.KVCacheUsage; g != "" {
			kv = cmp.Or(kv, g)
			add(gaugeMaxByInstanceQuery(g, rawSelector(src.first), src.first.GroupBy), seriesLegend(src.first, "{{instance}}"))
		}
	}); len(ts) > 0 {
		out = append(out, timeseriesPanel("KV-cache usage",
			w.say(templates.PanelKVCache, templates.Panel{Metric: kv}),
			ts, seriesSpec{unit: "percentunit", min: num("0"), max: num("1")}))
	}
	return out
}
