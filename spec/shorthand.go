package spec

import (
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/spec/engine"
)

// ShorthandAPIVersion and ShorthandKind identify the inference shorthand.
const (
	ShorthandAPIVersion = "inferslo/v1alpha1"
	ShorthandKind       = "InferenceSLO"
)

// Shorthand is one service's inference SLOs in compact form. It expands to
// plain OpenSLO v1 (see Expand), so both forms compile to the same rules.
type Shorthand struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   ShorthandMetadata `yaml:"metadata"`
	Spec       ShorthandSpec     `yaml:"spec"`
}

// ShorthandMetadata names the document.
type ShorthandMetadata struct {
	Name        string            `yaml:"name"`
	DisplayName string            `yaml:"displayName,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// ShorthandSpec is the service, its engine and objectives.
type ShorthandSpec struct {
	// Service defaults to metadata.name.
	Service     string `yaml:"service,omitempty"`
	Description string `yaml:"description,omitempty"`
	// Tier is interactive (the default) or batch: a batch tier raises
	// tickets only, reads end-to-end latency when an objective names no
	// SLI, defaults the window to 90d and keeps its burn out of KEDA.
	// Named, it labels every series and alert (slo_tier) and prefixes the
	// rule groups.
	Tier string `yaml:"tier,omitempty"`
	// Engine is a catalog id: vllm, sglang, tgi, triton, otel ...
	Engine string `yaml:"engine"`
	// EngineVersion picks the catalog's variant for that release (names
	// and buckets changed across releases); empty means the newest.
	EngineVersion string `yaml:"engineVersion,omitempty"`
	// Metrics declares the service's own metrics (histograms with unit and
	// buckets, error and request counters, gauges) in the catalog's
	// format; Engine then names this custom engine.
	Metrics *engine.Engine `yaml:"metrics,omitempty"`
	// Buckets are histogram bounds the deployment changed from the
	// engine's defaults (vLLM's custom_histogram_buckets, SGLang's
	// --bucket-* flags), by SLI role, in the histogram's unit; every check
	// uses them.
	Buckets map[string][]float64 `yaml:"buckets,omitempty"`
	// Selector is label equality matchers applied to every engine series.
	Selector map[string]string `yaml:"selector,omitempty"`
	// GroupBy splits every objective into one SLO per value of these labels
	// (per model, say), each with its own budget and alerts.
	GroupBy []string `yaml:"groupBy,omitempty"`
	// Window is the rolling SLO window, 1d to 90d; with Calendar, the
	// calendar period: 1M, 1Q, whole weeks (1w) or whole days.
	Window string `yaml:"window"`
	// Calendar makes the window a calendar period whose budget starts
	// afresh at each boundary.
	Calendar *ShorthandCalendar `yaml:"calendar,omitempty"`
	// ScrapeInterval of the engine's metrics (default 30s); rate windows
	// cover at least four scrapes.
	ScrapeInterval string `yaml:"scrapeInterval,omitempty"`
	// EvaluationInterval of the generated rule groups (default 1m).
	EvaluationInterval string `yaml:"evaluationInterval,omitempty"`
	// TTFTDenominator: histogram (default; pair TTFT with an errors
	// objective) or requests (failed requests count as slow).
	TTFTDenominator string `yaml:"ttftDenominator,omitempty"`
	// HistogramType is classic (le buckets) or native (exponential
	// buckets, no le: OpenTelemetry exponential histograms); default: the
	// engine's.
	HistogramType string `yaml:"histogramType,omitempty"`
	// NativeSchema is the coarsest schema of native histograms (-4 to 8,
	// default 3); thresholds on its bucket boundaries count exactly.
	NativeSchema *int                  `yaml:"nativeSchema,omitempty"`
	Objectives   []ShorthandObjective  `yaml:"objectives"`
	Alerting     ShorthandAlerting     `yaml:"alerting,omitempty"`
	Autoscaling  *ShorthandAutoscaling `yaml:"autoscaling,omitempty"`
}

// ShorthandCalendar places calendar periods: in a time zone (default UTC),
// from a start (default "2024-01-01 00:00:00", a Monday and a first of
// January, so weeks start on Mondays).
type ShorthandCalendar struct {
	TimeZone  string `yaml:"timeZone,omitempty"`
	StartTime string `yaml:"startTime,omitempty"`
}

// ShorthandObjective is one SLO of the service.
type ShorthandObjective struct {
	// SLI is ttft, itl, tpot, e2e, queue, errors, a failure kind
	// (incomplete, rejections, streams) or goodput.
	SLI string `yaml:"sli"`
	// Name of the SLO; defaults to <metadata.name>-<sli>.
	Name        string `yaml:"name,omitempty"`
	DisplayName string `yaml:"displayName,omitempty"`
	// Threshold is the latency bound (250ms, 1.5s); latency SLIs only.
	Threshold string `yaml:"threshold,omitempty"`
	// Target is the share of good events: 99% or 0.99.
	Target string `yaml:"target"`
	// Selector narrows this objective (one model of several, say); merged
	// with the spec's, its value wins for a label both name.
	Selector map[string]string `yaml:"selector,omitempty"`
	// Total, Good and Bad override the preset's event queries; the
	// service selector is added to their selectors.
	// ScaleOnBurn puts this objective's burn rate into the KEDA burn-rate
	// trigger; latency objectives do by default, errors do not (more
	// replicas do not fix failing requests).
	ScaleOnBurn *bool  `yaml:"scaleOnBurn,omitempty"`
	Total       string `yaml:"total,omitempty"`
	Good        string `yaml:"good,omitempty"`
	Bad         string `yaml:"bad,omitempty"`
}

// ShorthandAlerting tunes the burn-rate alerts.
type ShorthandAlerting struct {
	Page   ShorthandTier `yaml:"page,omitempty"`
	Ticket ShorthandTier `yaml:"ticket,omitempty"`
	// RunbookURL goes into every alert's runbook_url annotation.
	RunbookURL string `yaml:"runbookURL,omitempty"`
	// DashboardURL goes into every alert's dashboard_url annotation.
	DashboardURL string `yaml:"dashboardURL,omitempty"`
	// NoData alerts when the SLI's series vanish (default true).
	NoData *bool `yaml:"noData,omitempty"`
	// MinEventsPerSecond keeps burn alerts silent below this traffic.
	MinEventsPerSecond string `yaml:"minEventsPerSecond,omitempty"`
	// Labels go on every alert (team, routing keys).
	Labels map[string]string `yaml:"labels,omitempty"`
	// Severities renames the severity label's values per tier, such as
	// {page: critical, ticket: warning}.
	Severities map[string]string `yaml:"severities,omitempty"`
	// Outage turns the outage tier off (on beside a page tier).
	Outage *ShorthandToggle `yaml:"outage,omitempty"`
	// QueueBacklog tunes the early warning on queue depth per replica.
	QueueBacklog *ShorthandBacklog `yaml:"queueBacklog,omitempty"`
	// LoadShedding tunes the load-shedding recordings of a TTFT SLO.
	LoadShedding *ShorthandShedding `yaml:"loadShedding,omitempty"`
	// Maintenance are planned windows left out of the SLI, the budget
	// and every burn alert.
	Maintenance []ShorthandMaintenance `yaml:"maintenance,omitempty"`
}

// ShorthandTier enables a tier and sets its `for`.
type ShorthandTier struct {
	Enabled *bool  `yaml:"enabled,omitempty"`
	For     string `yaml:"for,omitempty"`
}

// ShorthandAutoscaling is the KEDA section; in plain OpenSLO it is the JSON
// value of the inferslo.dev/autoscaling annotation.
type ShorthandAutoscaling struct {
	Target struct {
		// APIVersion names the group and version of a kind outside those
		// inferslo knows (any kind with a scale subresource).
		APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
		Kind       string `yaml:"kind,omitempty" json:"kind,omitempty"`
		Name       string `yaml:"name" json:"name"`
	} `yaml:"target" json:"target"`
	Namespace              string             `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	MinReplicas            *int               `yaml:"minReplicas,omitempty" json:"minReplicas,omitempty"`
	MaxReplicas            int                `yaml:"maxReplicas" json:"maxReplicas"`
	Prometheus             string             `yaml:"prometheus" json:"prometheus"`
	AuthenticationRef      string             `yaml:"authenticationRef,omitempty" json:"authenticationRef,omitempty"`
	Headroom               string             `yaml:"headroom,omitempty" json:"headroom,omitempty"`
	QueuePerReplica        string             `yaml:"queuePerReplica,omitempty" json:"queuePerReplica,omitempty"`
	BurnRateTrigger        bool               `yaml:"burnRateTrigger,omitempty" json:"burnRateTrigger,omitempty"`
	ScaleUpStabilization   string             `yaml:"scaleUpStabilization,omitempty" json:"scaleUpStabilization,omitempty"`
	ScaleDownStabilization string             `yaml:"scaleDownStabilization,omitempty" json:"scaleDownStabilization,omitempty"`
	FallbackReplicas       *int               `yaml:"fallbackReplicas,omitempty" json:"fallbackReplicas,omitempty"`
	Capacity               *ShorthandCapacity `yaml:"capacity,omitempty" json:"capacity,omitempty"`
	// Groups lists, for a grouped SLO, the label values of each group to
	// autoscale (one ScaledObject each, target.name naming {{label}}).
	Groups []map[string]string `yaml:"groups,omitempty" json:"groups,omitempty"`
}

// ShorthandCapacity holds the facts of the capacity plan.
type ShorthandCapacity struct {
	PeakRPS            string `yaml:"peakRPS,omitempty" json:"peakRPS,omitempty"`
	MeanServiceTime    string `yaml:"meanServiceTime,omitempty" json:"meanServiceTime,omitempty"`
	ReplicaConcurrency string `yaml:"replicaConcurrency,omitempty" json:"replicaConcurrency,omitempty"`
}

// decodeStrict decodes a node rejecting unknown fields, each located at its
// own key and checked against the fields of the object that holds it.
func (keys structKeys) decodeStrict(d *doc, out any) Problems {
	var ps Problems
	for _, u := range keys.unknownKeys(d.node, reflect.TypeOf(out)) {
		ps = append(ps, d.errorf(u.path, "unknown field %q%s", u.key.Value, didYouMean(u.key.Value, u.known)))
	}
	if len(ps) > 0 {
		return ps
	}
	if err := d.node.Decode(out); err != nil {
		for _, msg := range yamlErrors(err) {
			// yaml.v3 names the line of a value it cannot decode: locate
			// the scalar there.
			path, _ := findKey(d.node, func(_, v *yaml.Node) bool { return v.Kind == yaml.ScalarNode && v.Line == msg.line }, "")
			ps = append(ps, d.errorf(path, "%s", msg.text))
		}
	}
	return ps
}

// yamlError is one message of a yaml.v3 decoding error and the line it
// names, if any.
type yamlError struct {
	text string
	line int
}

// yamlErrors splits a yaml.TypeError into its messages, each without its
// "line N: " prefix, which becomes the line.
func yamlErrors(err error) []yamlError {
	var msgs []string
	if te, ok := err.(*yaml.TypeError); ok {
		msgs = te.Errors
	} else {
		msgs = []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	out := make([]yamlError, len(msgs))
	for i, m := range msgs {
		out[i].text = m
		if j := strings.Index(m, ": "); strings.HasPrefix(m, "line ") && j > 0 {
			out[i].line, _ = strconv.Atoi(m[len("line "):j])
			out[i].text = m[j+2:]
		}
	}
	return out
}

func (s *Shorthand) serviceName() string {
	if s.Spec.Service != "" {
		return s.Spec.Service
	}
	return s.Metadata.Name
}

func (o ShorthandObjective) sloName(doc string) string {
	if o.Name != "" {
		return o.Name
	}
	return doc + "-" + o.SLI
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

func fmtList(items []string) string {
	return strings.Join(items, ", ")
}
