package grafana

import (
	"fmt"
	"slices"

	pq "github.com/inferslo/inferslo/compiler/query"

	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
)

// rateInterval is Grafana's rate window macro: at least four scrape
// intervals, and it grows with the zoom level.
const rateInterval = "$__rate_interval"

// percentiles drawn on every latency panel, as PromQL quantiles.
func percentiles() []struct{ q, name string } {
	return []struct{ q, name string }{{"0.5", "p50"}, {"0.95", "p95"}, {"0.99", "p99"}}
}

// percentileQuery is a quantile of a histogram's recent observations, one
// per group of the labels given; a native histogram is one series without
// le, so its rates are summed whole.
func percentileQuery(q, histogram, selector string, native bool, groupBy []string) string {
	return pq.Percentile(q, histogram, selector, native, groupBy, rateInterval)
}

// counterRateQuery rates an engine's counter, or a sum of counters (Triton
// counts requests as success plus failure), scoped by selector.
func counterRateQuery(counter, selector string, by []string) string {
	sum := sumBy(by) + " "
	if len(by) == 0 {
		sum = "sum"
	}
	if pq.ValidMetricName(counter) {
		return fmt.Sprintf("%s(rate(%s[%s]))", sum, pq.SeriesSelector(counter, selector), rateInterval)
	}
	scoped := scopedQuery(counter, selector)
	// rate() goes on every selector; Grafana's interval macro is not PromQL,
	// so it replaces a placeholder range after the parser printed the query.
	rated, err := pq.RateBy(scoped, placeholderRange, by)
	if err != nil {
		return fmt.Sprintf("%s(rate(%s[%s]))", sum, scoped, rateInterval)
	}
	return strings.ReplaceAll(rated, "["+model.FormatDuration(placeholderRange)+"]", "["+rateInterval+"]")
}

// sumBy is sum, split by the labels given (a grouped SLO's groups, the
// external labels of a global view).
func sumBy(by []string) string {
	if len(by) == 0 {
		return "sum"
	}
	return "sum by (" + strings.Join(by, ", ") + ")"
}

// placeholderRange stands for $__rate_interval while a query is parsed;
// counter queries select instant vectors, so no range of theirs collides.
const placeholderRange = 1234 * time.Second

func gaugeSumQuery(gauge, selector string, by []string) string {
	if len(by) == 0 {
		return fmt.Sprintf("sum(%s)", scopedQuery(gauge, selector))
	}
	return fmt.Sprintf("%s (%s)", sumBy(by), scopedQuery(gauge, selector))
}

func gaugeMaxByInstanceQuery(gauge, selector string, by []string) string {
	return fmt.Sprintf("max by (%s) (%s)", strings.Join(append([]string{"instance"}, by...), ", "), scopedQuery(gauge, selector))
}

// scopedQuery adds the dashboard's matchers to an engine query, which may
// carry matchers of its own (nv_trt_llm_request_metrics{request_type="waiting"}).
// Catalog and spec queries were parsed before, so the fallback is never used
// on valid input.
func scopedQuery(query, selector string) string {
	out, err := pq.Scoped(query, strings.ReplaceAll(selector, "$", "__var__"))
	if err != nil {
		return query
	}
	return strings.ReplaceAll(out, "__var__", "$")
}

// alertsQuery counts the SLO alerts firing now, one series per alert and
// group of a grouped SLO; matcher narrows to a service or a set of SLOs.
func alertsQuery(matcher string, groups []string) string {
	by := strings.Join(append([]string{"alertname", "severity", model.LabelSLO}, groups...), ", ")
	return fmt.Sprintf(`sum by (%s) (ALERTS{alertname=~"%s|%s",alertstate="firing",%s})`,
		by, model.AlertBurn, model.AlertNoData, matcher)
}

// groupLabels lists the grouping labels of the SLOs, each once, in order.
func groupLabels(slos []model.SLO) []string {
	var out []string
	for _, s := range slos {
		for _, l := range s.GroupBy {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// groupLegend names the groups of a series in a legend: " {{model_name}}".
func groupLegend(groups []string) string {
	var b strings.Builder
	for _, l := range groups {
		b.WriteString(" {{" + l + "}}")
	}
	return b.String()
}

// serviceRegexMatcher matches exactly the named services.
func serviceRegexMatcher(services []string) string {
	names := make([]string, len(services))
	for i, s := range services {
		names[i] = regexp.QuoteMeta(s)
	}
	return fmt.Sprintf("%s=~%q", model.LabelService, strings.Join(names, "|"))
}

// instanceLabel is the target label Prometheus adds to every scraped series;
// it gets a dashboard variable beside the spec's selector labels.
const instanceLabel = "instance"

// usableVariable reports whether a label name can also be a Grafana variable
// name: plain identifiers only, not Grafana's own "__" names, and not the
// datasource variable's name.
func usableVariable(label string) bool {
	if label == "" || label == "datasource" || strings.HasPrefix(label, "__") {
		return false
	}
	for i, r := range label {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// varLabels lists the labels of an inference SLO that get a dashboard
// variable: its selector labels, its grouping labels, then instance.
func varLabels(slo model.SLO) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range append(append(append([]string{}, slo.Inference.SelectorLabels...), slo.GroupBy...), instanceLabel) {
		if usableVariable(l) && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// rawSelector is the matchers text for raw engine series of one SLO: the
// spec's selector keeps the SLO's scope, and one regex matcher per variable
// lets a reader narrow it (the "All" value is .*, which keeps everything).
func rawSelector(slo model.SLO) string {
	parts := []string{}
	if s := strings.TrimSpace(slo.Inference.Selector); s != "" {
		parts = append(parts, s)
	}
	for _, l := range varLabels(slo) {
		parts = append(parts, fmt.Sprintf(`%s=~"$%s"`, l, l))
	}
	return strings.Join(parts, ",")
}

// probeMetric is a series every target of the engine exposes, used to list
// label values for the variables.
func probeMetric(inf *model.Inference) string {
	var q string
	switch {
	case inf.Signals.Requests != "":
		q = inf.Signals.Requests
	case inf.Native && inf.Histogram != "":
		return inf.Histogram
	case inf.Histogram != "":
		return inf.Histogram + "_count"
	case inf.Native && inf.Signals.TTFT != "":
		return inf.Signals.TTFT
	case inf.Signals.TTFT != "":
		return inf.Signals.TTFT + "_count"
	default:
		q = inf.Signals.QueueDepth
	}
	// An engine's request count may be a sum of counters (Triton), or a
	// UTF-8 name in braces: the probe is its first metric's name.
	if names := engine.MetricNames(q); len(names) > 0 {
		return names[0]
	}
	return q
}

// recorded selects a recorded series of one SLO (and window, when
// non-zero). On a dashboard with variables, a grouped SLO's series are
// narrowed to the groups chosen.
func recorded(name string, slo model.SLO, window time.Duration, narrow bool) string {
	return narrowed(model.Selector(name, slo, window), slo, narrow)
}

// narrowed is a selector of one SLO's series narrowed, when narrow, to the
// groups the dashboard's variables choose.
func narrowed(sel string, slo model.SLO, narrow bool) string {
	if !narrow {
		return sel
	}
	var extra []string
	for _, l := range slo.GroupBy {
		if usableVariable(l) {
			extra = append(extra, fmt.Sprintf(`%s=~"$%s"`, l, l))
		}
	}
	if len(extra) == 0 {
		return sel
	}
	return strings.TrimSuffix(sel, "}") + "," + strings.Join(extra, ",") + "}"
}

// seriesLegend names a series of an SLO in a panel: the text given, then the
// group of a grouped SLO ("chat-ttft llama-3-8b").
func seriesLegend(slo model.SLO, text string) string {
	return text + groupLegend(slo.GroupBy)
}

// windowsOfTiers lists the distinct alert windows of an SLO, ascending; the
// base window when no tier is enabled.
func windowsOfTiers(slo model.SLO) []time.Duration {
	seen := map[time.Duration]bool{}
	var out []time.Duration
	for _, t := range slo.Alerting.Tiers {
		for _, p := range t.Windows {
			for _, w := range []time.Duration{p.Short, p.Long} {
				if !seen[w] {
					seen[w] = true
					out = append(out, w)
				}
			}
		}
	}
	if len(out) == 0 {
		out = append(out, slo.BaseWindow())
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
