// Package model holds the one intermediate form every backend reads: a
// resolved, checked SLO. Decoding and validation happen before (package spec);
// artifacts are produced after (one backend per artifact). Backends never see
// raw YAML.
package model

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Set is every SLO of one compilation, sorted by service then name.
type Set struct {
	SLOs []SLO
}

// Services returns the service names in stable order.
func (s Set) Services() []string {
	var out []string
	for _, svc := range s.PerService() {
		out = append(out, svc.Name)
	}
	return out
}

// ServiceSLOs is one service and its SLOs.
type ServiceSLOs struct {
	Name string
	SLOs []SLO
}

// PerService groups the SLOs by service, services in name order and each
// service's SLOs in set order, in one pass: fleets hold thousands of
// services, so a scan per service would be quadratic. A service whose SLOs
// lie together in the set, as in a sorted one, gets them as a part of the
// set's slice (its capacity cut, so an append copies) rather than a copy:
// the SLOs are read, not changed.
func (s Set) PerService() []ServiceSLOs {
	out := s.InSpecOrder()
	slices.SortFunc(out, func(a, b ServiceSLOs) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// InSpecOrder groups the SLOs by service, services in the order of their
// first SLO.
func (s Set) InSpecOrder() []ServiceSLOs {
	index := map[string]int{}
	var out []ServiceSLOs
	var from []int // where each service's part of s.SLOs starts; -1: copied
	for j, slo := range s.SLOs {
		i, ok := index[slo.Service.Name]
		if !ok {
			i = len(out)
			index[slo.Service.Name] = i
			out = append(out, ServiceSLOs{Name: slo.Service.Name})
			from = append(from, j)
		}
		if from[i] >= 0 && from[i]+len(out[i].SLOs) == j {
			out[i].SLOs = s.SLOs[from[i] : j+1 : j+1]
			continue
		}
		from[i] = -1
		out[i].SLOs = append(out[i].SLOs, slo)
	}
	return out
}

// Sort puts SLOs in the stable order backends rely on.
func (s *Set) Sort() {
	slices.SortStableFunc(s.SLOs, func(a, b SLO) int {
		return cmp.Or(cmp.Compare(a.Service.Name, b.Service.Name), cmp.Compare(a.Name, b.Name))
	})
}

// SLO is one objective of one service over one window, with everything needed
// to generate its artifacts.
type SLO struct {
	// Name is unique across a compilation and safe as a label value and a
	// Kubernetes name (DNS label).
	Name        string
	DisplayName string
	Description string
	Service     Service
	// Source is the spec file the SLO came from, for generated-file headers.
	Source string

	SLI SLI
	// GroupBy are label names that split the SLO into one SLO per label
	// value set (per model, say): every recording keeps them, and each group
	// has its own burn rate, budget and alerts. Empty: one group.
	GroupBy   []string
	Objective Decimal // target ratio of good events, e.g. 0.99
	Window    time.Duration
	// Calendar is set when the window is a calendar period that resets at
	// its boundaries; Window is then the period's nominal length.
	Calendar *Calendar
	// Budgeting is the OpenSLO budgeting method: Occurrences, Timeslices
	// or RatioTimeslices.
	Budgeting string
	// Timeslices is set for the two time-slice methods.
	Timeslices *Timeslices

	Alerting Alerting
	// Evaluation is the rule group evaluation interval.
	Evaluation time.Duration
	// ScrapeInterval is what the SLI's metrics are scraped at; rate windows
	// must cover at least four scrapes.
	ScrapeInterval time.Duration

	// Inference holds the LLM-serving facts when the SLO came from an engine
	// preset (shorthand, or OpenSLO with inferslo.dev annotations).
	Inference *Inference
	// Autoscaling is set when the spec asks for a KEDA ScaledObject.
	Autoscaling *Autoscaling
	// ScaleOnBurn puts this SLO's burn rate into the KEDA burn-rate trigger
	// (when the service enables it). Latency SLOs do by default: replicas
	// cure queueing, not errors.
	ScaleOnBurn bool
	// SLOTier is who waits on the SLO's requests: SLOTierInteractive or
	// SLOTierBatch. Empty when the spec names none: interactive, but
	// without the label and group prefix a named tier adds.
	SLOTier string
}

// SLO tiers: interactive requests have a person waiting on them, batch
// requests a job that can wait, so batch SLOs raise tickets, never pages.
const (
	SLOTierInteractive = "interactive"
	SLOTierBatch       = "batch"
)

// SLOTiers are the valid tiers, the default first.
var SLOTiers = []string{SLOTierInteractive, SLOTierBatch}

// Batch tells whether the SLO is of the batch tier.
func (s SLO) Batch() bool { return s.SLOTier == SLOTierBatch }

// ErrorBudget is 1 - objective.
func (s SLO) ErrorBudget() Decimal { return NewDecimal(1, 1).Sub(s.Objective) }

// Service is the OpenSLO Service an SLO belongs to.
type Service struct {
	Name        string
	DisplayName string
	Description string
}

// SLI is a ratio of events. Exactly one of Good, Bad, Raw or Threshold is
// set; Total is set unless Raw or Threshold is.
type SLI struct {
	// Counter: the queries select counters and the compiler applies rate().
	// Otherwise the queries already yield per-second rates.
	Counter bool
	Total   *Query
	Good    *Query
	Bad     *Query
	// Raw is a query that yields a ratio directly (RawType says of what).
	Raw     *Query
	RawType string // "success" or "failure"
	// Threshold is set, alone, for a threshold SLI of a time-slice SLO.
	Threshold *Threshold
}

// Query is a PromQL expression in canonical form (as the parser prints it).
type Query struct {
	Expr string
}

// Alerting is the multi-window, multi-burn-rate alerting of an SLO.
type Alerting struct {
	// Tiers in severity order: page first, then ticket. Empty when every
	// tier is disabled.
	Tiers []Tier
	// NoData adds an alert when the SLI's series are absent altogether.
	NoData bool
	// MinEventsPerSecond gates burn alerts: a window pair fires only while
	// its long window saw at least this many events per second. Zero: no gate.
	MinEventsPerSecond Decimal
	RunbookURL         string
	DashboardURL       string
	// Labels go on every alert of the SLO, for Alertmanager routes.
	Labels map[string]string
	// SeverityLabels renames the severity label's value per tier ("page":
	// "critical"); a tier not named keeps its own name.
	SeverityLabels map[string]string
	// Outage is the outage tier (OutageTierOf), or nil: a burn alert that
	// pages within minutes when (nearly) every request fails.
	Outage *Tier
	// Backlog is the early warning on queue depth per replica, or nil.
	Backlog *Backlog
	// Shedding is the load-shedding signals, or nil.
	Shedding *Shedding
	// Maintenance are the planned windows left out of the SLI, the budget
	// and every burn alert.
	Maintenance []Maintenance
}

// SeverityLabel is the severity label's value for a tier.
func (a Alerting) SeverityLabel(tier string) string {
	if tier == OutageTier {
		tier = PageTier
	}
	if v, ok := a.SeverityLabels[tier]; ok {
		return v
	}
	return tier
}

// Tier is one alert rule: its window pairs are OR'ed.
type Tier struct {
	Severity string // "page" or "ticket"
	For      time.Duration
	Windows  []WindowPair
}

// WindowPair fires when the burn rate over both windows exceeds Factor.
type WindowPair struct {
	Long   time.Duration
	Short  time.Duration
	Factor Decimal
}

// BudgetFraction is the share of the whole error budget spent when the burn
// rate holds at Factor for the long window: factor × long / SLO window.
func (p WindowPair) BudgetFraction(window time.Duration) Decimal {
	return p.Factor.Mul(NewDecimal(int64(p.Long), int64(window)))
}

// Windows returns every distinct window the SLO's rules record, ascending:
// the alert windows and the SLO window itself. A calendar period of weeks or
// days is labelled as its rolling window would be (1w), so the period's
// recording takes the label and the rolling SLO window is left out, unless
// an alert reads it.
func (s SLO) Windows() []time.Duration {
	var out []time.Duration
	if s.Calendar == nil || s.Calendar.Label() != FormatDuration(s.Window) {
		out = append(out, s.Window)
	}
	for _, t := range s.Alerting.Tiers {
		for _, p := range t.Windows {
			out = append(out, p.Long, p.Short)
		}
	}
	out = append(out, s.BaseWindow())
	slices.Sort(out)
	return slices.Compact(out)
}

// BaseWindow is the rate window of the only rules that read raw series; every
// longer window is built from its recordings. It is the shortest alert window
// but at most five minutes, so raw series are never rescanned over hours, and
// never below four scrapes, so rate() always has samples.
func (s SLO) BaseWindow() time.Duration {
	if s.Timeslices != nil {
		// The slice is read from raw series once; everything else averages slices.
		return s.Timeslices.Window
	}
	base := 5 * time.Minute
	for _, t := range s.Alerting.Tiers {
		for _, p := range t.Windows {
			if p.Short < base {
				base = p.Short
			}
		}
	}
	return max(base, 4*s.ScrapeInterval)
}

// Inference is what an engine preset knows about an SLO's metrics.
type Inference struct {
	Engine      string // catalog id, e.g. "vllm"
	EngineTitle string // "vLLM"
	// EngineVersion is the release whose catalog variant applies; empty
	// for the newest.
	EngineVersion string
	// Role of the SLI: ttft, itl, tpot, e2e, queue, errors, a failure kind
	// (incomplete, rejections, streams) or goodput.
	Role string
	// Threshold is the latency bound in seconds; once converted to Unit it
	// is a bucket boundary of Histogram. Zero for the errors role.
	Threshold Decimal
	// Histogram is the base name of the latency histogram (no _bucket suffix).
	Histogram string
	// Buckets are the histogram's upper bounds, in Unit; empty for a
	// native histogram.
	Buckets []float64
	// Native is set when the engine's histograms are native (exponential
	// buckets in one series, no le), NativeSchema the coarsest schema they
	// are expected at: a threshold is counted exactly when it is a bucket
	// boundary of that schema, 2^(k·2^-schema).
	Native       bool
	NativeSchema int
	// Unit of the histogram's buckets: seconds or milliseconds.
	Unit string
	// Selector is the spec's label selector, as matchers text without braces
	// (`model_name="llama-3-70b"`), applied to every engine series.
	Selector string
	// SelectorLabels are the label names the spec selects on, for dashboard
	// template variables.
	SelectorLabels []string
	// TTFTDenominator says how TTFT survivorship is handled: "histogram"
	// (paired with the service's error SLO) or "requests" (total taken from the
	// finished-requests counter, so failed requests count as slow).
	TTFTDenominator string
	// Signals are the engine's other series, for dashboards and autoscaling.
	Signals Signals
}

// Signals names engine series by role; empty when the engine lacks one.
type Signals struct {
	QueueDepth       string // gauge: requests waiting
	Running          string // gauge: requests running
	KVCacheUsage     string // gauge: fraction 0..1
	Requests         string // counter: finished requests
	PromptTokens     string // counter
	GenerationTokens string // counter
	TTFT             string // histogram base name
	ITL              string // histogram base name
	TPOT             string // histogram base name
	E2E              string // histogram base name
	Queue            string // histogram base name
	// Buckets of the histograms above, by base name, in their own unit.
	Buckets map[string][]float64
	// Units of the histograms above (seconds or milliseconds), by base name.
	Units map[string]string
}

// UnitsPerSecond is how many of a histogram unit make one second.
func UnitsPerSecond(unit string) int64 {
	if unit == "milliseconds" {
		return 1000
	}
	return 1
}

// NativeThreshold is the threshold in the histogram's unit, the value of
// its le label.
func (i *Inference) NativeThreshold() Decimal {
	return i.Threshold.Mul(NewDecimal(UnitsPerSecond(i.Unit), 1))
}

// Autoscaling is what a KEDA ScaledObject needs beyond the SLO itself.
type Autoscaling struct {
	TargetKind string // Deployment by default
	// TargetAPIVersion is the target's group/version when the spec names
	// one (a custom resource with a scale subresource); empty for the
	// kinds whose group the KEDA backend knows.
	TargetAPIVersion  string
	TargetName        string
	Namespace         string
	MinReplicas       int
	MaxReplicas       int
	ServerAddress     string // Prometheus URL KEDA queries
	AuthenticationRef string // TriggerAuthentication name, optional
	// Headroom is the fraction of the TTFT threshold at which scaling starts
	// (0.8: scale when p99 TTFT reaches 80% of the SLO threshold).
	Headroom Decimal
	// QueuePerReplica is the waiting-requests target per replica; zero means
	// derive it from the capacity plan.
	QueuePerReplica Decimal
	// BurnRateTrigger adds a trigger on the base-window burn rate.
	BurnRateTrigger        bool
	ScaleUpStabilization   time.Duration
	ScaleDownStabilization time.Duration
	FallbackReplicas       int
	Capacity               Capacity
	// Groups are the label values of the groups to autoscale, one
	// ScaledObject each, when the SLO is grouped: there is no scrape at
	// compile time, so the groups must be declared. TargetName then holds
	// {{label}} placeholders that ScaleTargetName fills per group.
	Groups []ScaleGroup
}

// Key prints every setting, decimals exactly, so equal settings compare
// equal whatever their internal representation.
func (a *Autoscaling) Key() string {
	c := a.Capacity
	return fmt.Sprintf("%s|%s|%s|%s|%d|%d|%s|%s|%s|%s|%t|%s|%s|%d|%s|%s|%s|%v",
		a.TargetAPIVersion, a.TargetKind, a.TargetName, a.Namespace, a.MinReplicas, a.MaxReplicas, a.ServerAddress,
		a.AuthenticationRef, a.Headroom, a.QueuePerReplica, a.BurnRateTrigger,
		a.ScaleUpStabilization, a.ScaleDownStabilization, a.FallbackReplicas,
		c.PeakRPS, c.MeanServiceTime, c.ReplicaConcurrency, a.Groups)
}

// ScaleGroup is one group's label values, in the SLO's GroupBy order.
type ScaleGroup []LabelValue

// LabelValue is one label's value.
type LabelValue struct{ Name, Value string }

// ScaleTargetName fills the target name's {{label}} placeholders with a
// group's values by plain substitution: a spec string never becomes
// template code.
func (a *Autoscaling) ScaleTargetName(g ScaleGroup) string {
	name := a.TargetName
	for _, l := range g {
		name = strings.ReplaceAll(name, "{{"+l.Name+"}}", l.Value)
	}
	return name
}

// Capacity holds optional facts for the capacity plan.
type Capacity struct {
	PeakRPS            Decimal       // requests per second at peak
	MeanServiceTime    time.Duration // mean time one request occupies a slot
	ReplicaConcurrency Decimal       // measured concurrent requests one replica sustains
}

// Sources lists the distinct spec files of some SLOs, sorted, for the
// headers of generated files.
func Sources(slos []SLO) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range slos {
		if s.Source != "" && !seen[s.Source] {
			seen[s.Source] = true
			out = append(out, s.Source)
		}
	}
	sort.Strings(out)
	return out
}
