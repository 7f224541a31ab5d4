package importer

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

// pyrraSLO is the part of a Pyrra ServiceLevelObjective inferslo reads.
type pyrraSLO struct {
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		Description string `yaml:"description"`
		Target      string `yaml:"target"`
		Window      string `yaml:"window"`
		Indicator   struct {
			Ratio *struct {
				Errors   pyrraQuery `yaml:"errors"`
				Total    pyrraQuery `yaml:"total"`
				Grouping []string   `yaml:"grouping"`
			} `yaml:"ratio"`
			Latency *struct {
				Success  pyrraQuery `yaml:"success"`
				Total    pyrraQuery `yaml:"total"`
				Grouping []string   `yaml:"grouping"`
			} `yaml:"latency"`
			LatencyNative *struct {
				Latency  string     `yaml:"latency"`
				Total    pyrraQuery `yaml:"total"`
				Grouping []string   `yaml:"grouping"`
			} `yaml:"latencyNative"`
			BoolGauge *struct {
				Metric   string   `yaml:"metric"`
				Grouping []string `yaml:"grouping"`
			} `yaml:"bool_gauge"`
		} `yaml:"indicator"`
		Alerting struct {
			Disabled   *bool  `yaml:"disabled"`
			Burnrates  *bool  `yaml:"burnrates"`
			Name       string `yaml:"name"`
			Severities any    `yaml:"severities"`
		} `yaml:"alerting"`
	} `yaml:"spec"`
}

type pyrraQuery struct {
	Metric string `yaml:"metric"`
}

// pyrraWindows are Pyrra's burn-rate pairs for an SLO window, with the
// `for` of each (Pyrra's slo.Windows): the 28d pairs scaled by window/28d
// and rounded to the minute, critical alerts paging and warnings ticketing.
func pyrraWindows(w time.Duration) []struct {
	severity          string
	for_, long, short time.Duration
	factor            int64
} {
	r := func(d time.Duration) time.Duration { return d.Round(time.Minute) }
	return []struct {
		severity          string
		for_, long, short time.Duration
		factor            int64
	}{
		{model.PageTier, r(w / (28 * 24 * 30)), r(w / (28 * 24)), r(w / (28 * 24 * 12)), 14},
		{model.PageTier, r(w / (28 * 24 * 4)), r(w / (28 * 4)), r(w / (28 * 24 * 2)), 7},
		{model.TicketTier, r(w / (28 * 24)), r(w / 28), r(w / (28 * 12)), 2},
		{model.TicketTier, r(w / (28 * 8)), r(w / 7), r(w / (28 * 4)), 1},
	}
}

// pyrra converts a Pyrra ServiceLevelObjective.
func pyrra(d spec.Doc) conversion {
	var c conversion
	var s pyrraSLO
	if err := d.Node().Decode(&s); err != nil {
		c.fail(d.Errorf("spec", "cannot read the Pyrra SLO: %v", err))
		return c
	}
	name := s.Metadata.Name
	if msg := spec.NameProblem(name); msg != "" {
		c.fail(d.Errorf("metadata.name", "%s", msg))
		return c
	}
	service := or(s.Metadata.Namespace, name)
	target, err := percentTarget(s.Spec.Target)
	if err != nil {
		c.fail(d.Errorf("spec.target", "%v", err))
		return c
	}
	win, err := model.ParseDuration(s.Spec.Window)
	if err != nil {
		c.fail(d.Errorf("spec.window", "%q is not a window such as 28d", s.Spec.Window))
		return c
	}
	tw, err := window(win)
	if err != nil {
		c.fail(d.Errorf("spec.window", "%v", err))
		return c
	}
	ind := s.Spec.Indicator
	var ratio v1.SLIRatioMetric
	var grouping []string
	var kind string // the indicator's key, for problems' paths
	changes := []string{}
	switch {
	case ind.Ratio != nil:
		ratio = v1.SLIRatioMetric{Counter: true, Bad: promSource(ind.Ratio.Errors.Metric), Total: promSource(ind.Ratio.Total.Metric)}
		grouping, kind = ind.Ratio.Grouping, "ratio"
	case ind.Latency != nil:
		ratio = v1.SLIRatioMetric{Counter: true, Good: promSource(ind.Latency.Success.Metric), Total: promSource(ind.Latency.Total.Metric)}
		grouping, kind = ind.Latency.Grouping, "latency"
	case ind.LatencyNative != nil:
		lat, err := model.ParseDuration(ind.LatencyNative.Latency)
		if err != nil || lat <= 0 {
			c.fail(d.Errorf("spec.indicator.latencyNative.latency", "%q is not a latency such as 200ms", ind.LatencyNative.Latency))
			return c
		}
		m := ind.LatencyNative.Total.Metric
		seconds := model.NewDecimal(int64(lat), int64(time.Second))
		ratio = v1.SLIRatioMetric{Counter: true,
			Good:  promSource(fmt.Sprintf("histogram_count(%s) * histogram_fraction(0, %s, %s)", m, seconds, m)),
			Total: promSource(fmt.Sprintf("histogram_count(%s)", m)),
		}
		grouping, kind = ind.LatencyNative.Grouping, "latencyNative"
		changes = append(changes, "requests under the latency count as inferslo counts them for native histograms: per series, histogram_fraction interpolating inside the bucket holding the threshold, as Pyrra's histogram_fraction does")
	case ind.BoolGauge != nil:
		ratio = v1.SLIRatioMetric{RawType: v1.SLIRawMetricTypeSuccess, Raw: promSource(ind.BoolGauge.Metric)}
		grouping, kind = ind.BoolGauge.Grouping, "bool_gauge"
		changes = append(changes, "the gauge's success ratio is its mean over the series at each evaluation, averaged over time; Pyrra counts samples, which weighs the same while the number of series stays constant")
	default:
		c.fail(d.Errorf("spec.indicator", "required: ratio, latency, latencyNative or bool_gauge"))
		return c
	}
	for _, src := range []*v1.SLIMetricSpec{ratio.Good, ratio.Bad, ratio.Total, ratio.Raw} {
		if src != nil && strings.TrimSpace(src.MetricSource.Spec["query"].(string)) == "" {
			c.fail(d.Errorf("spec.indicator", "a metric is missing: each query of the indicator needs its metric"))
			return c
		}
	}
	for i, g := range grouping {
		if spec.ReservedGroupLabel(g) {
			c.fail(d.Errorf(fmt.Sprintf("spec.indicator.%s.grouping[%d]", kind, i), "%q is a label inferslo sets on its own series and alerts, so it cannot group the SLO; relabel it in the query's metric or drop it from grouping", g))
			return c
		}
	}
	ext := spec.Extensions{Severities: map[string]string{model.PageTier: "critical", model.TicketTier: "warning"}, GroupBy: grouping}
	var policies []v1.SLOAlertPolicy
	a := s.Spec.Alerting
	if a.Severities != nil {
		c.fail(d.Warnf("spec.alerting.severities", "severities per burn speed have no counterpart in inferslo; the alerts keep Pyrra's default labels, critical for pages and warning for tickets"))
	}
	if a.Name != "" {
		changes = append(changes, "inferslo names its alerts itself; Pyrra's alert name is not carried over")
	}
	if a.Disabled != nil && *a.Disabled || a.Burnrates != nil && !*a.Burnrates {
		off := false
		ext.BurnAlerts = &off
	} else {
		var tiers []model.Tier
		var fors []string
		for _, p := range pyrraWindows(win) {
			if len(tiers) == 0 || tiers[len(tiers)-1].Severity != p.severity {
				// inferslo waits one `for` per tier: the tier's fastest pair's.
				tiers = append(tiers, model.Tier{Severity: p.severity, For: wholeMinutes(p.for_)})
			}
			t := &tiers[len(tiers)-1]
			t.Windows = append(t.Windows, model.WindowPair{Long: p.long, Short: p.short, Factor: model.NewDecimal(p.factor, 1)})
			if wholeMinutes(p.for_) != p.for_ || t.For != p.for_ {
				fors = append(fors, fmt.Sprintf("the %dx %s pair's for %s becomes %s", p.factor, model.FormatDuration(p.long), model.FormatDuration(p.for_), model.FormatDuration(t.For)))
			}
		}
		pols, more, err := tierPolicies(name, tiers, target)
		if err != nil {
			c.fail(d.Errorf("spec.window", "%v", err))
			return c
		}
		policies = pols
		changes = append(changes, "the burn-rate pairs are Pyrra's (14x and 7x page as critical, 2x and 1x ticket as warning, windows scaled by window/28d)")
		if len(fors) > 0 {
			changes = append(changes, "inferslo waits one `for` per tier, its fastest pair's: "+strings.Join(fors, "; "))
		}
		changes = append(changes, more...)
	}
	slo := importedSLO(name, s.Spec.Description, service, ratio, tw, target, ext, policies)
	c.objects = append(c.objects, v1.NewService(v1.Metadata{Name: service}, v1.ServiceSpec{}), slo)
	c.reports = append(c.reports, Report{SLO: name, Changes: changes})
	return c
}
