package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"
)

// Recorded series. Every one carries the labels slo, service and sli; the
// windowed ones also carry window ("5m", "28d"), so one name serves every
// window and dashboards can draw all windows of all SLOs with one query.
const (
	// EventsRate is events per second over window.
	EventsRate = "inferslo:sli_events:rate"
	// BadEventsRate is bad events per second over window.
	BadEventsRate = "inferslo:sli_bad_events:rate"
	// EventsIncrease is the events counted over window: the tiles an SLO
	// window is built from (TileWindow).
	EventsIncrease = "inferslo:sli_events:increase"
	// BadEventsIncrease is the bad events counted over window, in tiles.
	BadEventsIncrease = "inferslo:sli_bad_events:increase"
	// PeriodStart is when a calendar-window SLO's current period began,
	// in Unix seconds.
	PeriodStart = "inferslo:period_start:timestamp"
	// PeriodEnd is when the current calendar period ends (and the next
	// begins), in Unix seconds.
	PeriodEnd = "inferslo:period_end:timestamp"
	// ErrorRatio is bad / total events over window (absent at zero traffic).
	ErrorRatio = "inferslo:sli_error:ratio"
	// BudgetRemaining is 1 - the burn rate over the SLO window: the share of the
	// error budget left (negative when overspent).
	BudgetRemaining = "inferslo:error_budget_remaining:ratio"
	// Objective is the SLO's target ratio.
	Objective = "inferslo:objective:ratio"
	// Info is 1, with the SLO's facts as labels.
	Info = "inferslo:slo_info"
	// Misconfigured is 1 while the SLI's events exist but a histogram
	// bucket its good events read does not (an engine version or custom
	// buckets without that le): every event would count as bad. It carries
	// the missing selector's labels (le, model_name).
	Misconfigured = "inferslo:sli_misconfigured"
	// SliceValue is a time-slice SLO's SLI over one slice (window is the
	// slice): the threshold query's value, or the slice's share of good
	// events. NaN or absent for a slice without traffic.
	SliceValue = "inferslo:slice_sli:value"
	// SliceError is a time-slice SLO's error per slice (window is the
	// slice): 1 for a bad slice and 0 for a good one, or for RatioTimeslices
	// the slice's bad/total ratio. Absent for a slice without traffic.
	SliceError = "inferslo:slice_error:value"
	// GoodputLower and GoodputUpper bound goodput, the share of requests
	// within both the TTFT and the TPOT threshold, over window (Fréchet
	// bounds from the two SLOs' error ratios; the joint share itself is not
	// observable). They belong to a pair of SLOs: slo is "<ttft slo>+<tpot
	// slo>" and sli is goodput. Absent while either ratio is.
	GoodputLower = "inferslo:goodput:lower"
	GoodputUpper = "inferslo:goodput:upper"
	// MaintenanceActive is 1 while a planned maintenance window of the SLO
	// is open and 0 otherwise; the base rates leave out the events of every
	// evaluation whose rate window it touched.
	MaintenanceActive = "inferslo:maintenance:active"
)

// SLIGoodput is the role of goodput's lower bound as an SLI of its own.
const SLIGoodput = "goodput"

// Alert names; severity, slo and service labels tell the alerts apart.
const (
	AlertBurn   = "ErrorBudgetBurn"
	AlertNoData = "SLIDataMissing"
	// AlertMisconfigured is a ticket naming a missing threshold bucket;
	// burn-rate alerts of the SLO hold while it fires.
	AlertMisconfigured = "SLIMisconfigured"
)

// Label names on every generated series and alert.
const (
	LabelSLO     = "slo"
	LabelService = "service"
	LabelSLI     = "sli"
	LabelWindow  = "window"
	// LabelBaseWindow, on the info series, names the SLO's base window:
	// the shortest, which dashboards show as the burn rate now.
	LabelBaseWindow = "base_window"
	LabelSeverity   = "severity"
	// LabelBurnTier is page or ticket on burn alerts whatever the severity
	// label says, so one Alertmanager inhibit rule can mute the ticket of a
	// burn while its page fires.
	LabelBurnTier = "burn_tier"
	// LabelSLOTier is interactive or batch on every series and alert of an
	// SLO whose spec names its tier, for Alertmanager routes; the name
	// keeps it apart from burn_tier, the alert's page or ticket.
	LabelSLOTier = "slo_tier"
	// LabelTimeSlice, on the info series of a time-slice SLO, is the slice.
	LabelTimeSlice = "time_slice"
	// LabelScrapeInterval, on the info series of a time-slice SLO, is the
	// scrape interval its slices' rates assume.
	LabelScrapeInterval = "scrape_interval"
	// LabelEvaluationInterval, on the info series of a threshold SLO whose
	// slices hold several evaluations, is how often the SLI is evaluated.
	LabelEvaluationInterval = "evaluation_interval"
)

// Selector returns a PromQL selector of a recorded series for one SLO and,
// when window is non-zero, one window.
func Selector(name string, slo SLO, window time.Duration) string {
	if window == 0 {
		return SelectorAt(name, slo, "")
	}
	return SelectorAt(name, slo, FormatDuration(window))
}

// SelectorAt is Selector with the window label's value as written, such
// as a calendar period's "1M"; empty selects every window.
func SelectorAt(name string, slo SLO, window string) string {
	if window == "" {
		return name + "{" + LabelSLO + "=" + strconv.Quote(slo.Name) + "}"
	}
	return name + "{" + LabelSLO + "=" + strconv.Quote(slo.Name) + "," + LabelWindow + "=" + strconv.Quote(window) + "}"
}

// BudgetQuery is PromQL for the error budget an SLO has left: one series
// per group (and, for a calendar SLO, of the period so far), a ratio of the
// budget that is negative when overspent. The dashboards' budget panels and
// the budget command read it.
func BudgetQuery(slo SLO) string { return Selector(BudgetRemaining, slo, 0) }

// SLIName is the value of the sli label: the inference role, or "ratio" or
// "threshold" for plain OpenSLO indicators.
func SLIName(slo SLO) string {
	if slo.Inference != nil {
		return slo.Inference.Role
	}
	if slo.SLI.Threshold != nil {
		return "threshold"
	}
	return "ratio"
}

// BurnRate is PromQL for an SLO's burn rate over window: the error ratio
// divided by the error budget. No rule records it; what reads a burn rate
// divides, which costs one sample per series.
func BurnRate(slo SLO, window time.Duration) string {
	return fmt.Sprintf("%s / %s", Selector(ErrorRatio, slo, window), slo.ErrorBudget())
}

// ThresholdBuckets lists the histogram bucket selectors (those matching le)
// that an SLI's good events read. A histogram exposes all its buckets with
// its count, so one of them missing while events exist is a
// misconfiguration, not a burn.
func (s SLI) ThresholdBuckets() []string {
	if s.Good == nil {
		return nil
	}
	return query.BucketSelectors(s.Good.Expr)
}

// chainMark separates a rule group's name from its part number when a
// ruler's limit on rules per group chains it into parts. SLO names are DNS
// labels, so no group name of inferslo's own holds one.
const chainMark = "/"

// ChainPart names part (2 or more) of a chained rule group; part 1 keeps
// the group's name.
func ChainPart(group string, part int) string {
	if part < 2 {
		return group
	}
	return group + chainMark + strconv.Itoa(part)
}

// ChainOf splits a rule group's name into the name of the group it was cut
// from and its part: the name itself and 1 for a group not chained.
func ChainOf(name string) (group string, part int) {
	if i := strings.LastIndex(name, chainMark); i > 0 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil && n >= 2 && name[i+1:] == strconv.Itoa(n) {
			return name[:i], n
		}
	}
	return name, 1
}
