// Package engine is the metric catalog of LLM inference engines: which
// series an engine exposes for each SLI role, with their units, labels and
// histogram buckets, per engine version, and what an engine cannot measure.
// The facts live in catalog.yaml; this package only reads them. Teams add
// their own engines with a catalog file of the same format (Parse, Merge).
package engine

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed catalog.yaml
var catalogYAML []byte

// Roles are the latency SLIs a histogram can serve, in display order.
var Roles = []string{"ttft", "itl", "tpot", "e2e", "queue"}

// FailureKinds are the ratio SLIs beside errors that count one kind of
// failed request over the requests it could befall, in display order:
// incomplete (finished by a token budget or an abort), rejections (refused
// at admission) and streams (streams that did not complete, from a
// gateway's counters).
var FailureKinds = []string{"incomplete", "rejections", "streams"}

// IsLatency says whether an SLI role reads a latency histogram.
func IsLatency(role string) bool { return slices.Contains(Roles, role) }

// IsFailureKind says whether an SLI role is one of FailureKinds.
func IsFailureKind(role string) bool { return slices.Contains(FailureKinds, role) }

// Units of histogram buckets.
const (
	Seconds      = "seconds"
	Milliseconds = "milliseconds"
)

// Catalog is every known engine by id.
type Catalog struct {
	Engines map[string]*Engine `yaml:"engines"`
}

// Engine is one inference server's metrics, for one version range.
type Engine struct {
	ID    string `yaml:"-"`
	Title string `yaml:"title"`
	// Versions says which releases the entry describes; Variant is set
	// when Resolve applied version variants.
	Versions string `yaml:"versions"`
	Variant  string `yaml:"-"`
	// MinVersion is the oldest release the catalog covers.
	MinVersion string `yaml:"minVersion,omitempty"`
	Endpoint   string `yaml:"endpoint,omitempty"`
	Exporter   string `yaml:"exporter,omitempty"`
	// NoMetrics is set, with the reason, for an engine without a metrics
	// endpoint.
	NoMetrics string `yaml:"noMetrics,omitempty"`
	// Labels are the labels the engine puts on its series; MetricLabels
	// overrides them for single metrics.
	Labels       []string              `yaml:"labels"`
	LabelsNote   string                `yaml:"labelsNote,omitempty"`
	MetricLabels map[string][]string   `yaml:"metricLabels,omitempty"`
	Histograms   map[string]*Histogram `yaml:"histograms,omitempty"`
	// Means are signals exported only as cumulative time and count
	// counters: they yield a mean, never an exact share under a threshold.
	Means  map[string]*Mean `yaml:"means,omitempty"`
	Errors Errors           `yaml:"errors,omitempty"`
	// Failures are the failure kinds the engine counts, by role (see
	// FailureKinds): bad and total events of one ratio SLI each.
	Failures map[string]*Errors `yaml:"failures,omitempty"`
	Requests string             `yaml:"requests,omitempty"`
	Gauges   map[string]string  `yaml:"gauges,omitempty"`
	Counters map[string]string  `yaml:"counters,omitempty"`
	// Distributions are the engine's other histograms (token counts,
	// prefill and decode time), by what they measure: no SLI reads them,
	// but lint and --metrics know them.
	Distributions map[string]string `yaml:"distributions,omitempty"`
	// Lacks says, per SLI role or signal, what the engine cannot measure
	// and what it has instead.
	Lacks    map[string]string `yaml:"lacks,omitempty"`
	Variants []Variant         `yaml:"variants,omitempty"`
	Changes  []Change          `yaml:"changes,omitempty"`
	// HistogramType says how the latency histograms reach Prometheus:
	// classic (le buckets; the default) or native (exponential buckets in
	// one series, no le), as OpenTelemetry exponential histograms do.
	HistogramType string `yaml:"histogramType,omitempty"`
}

// Histogram types.
const (
	Classic = "classic"
	Native  = "native"
)

// Histogram is a classic histogram of one latency.
type Histogram struct {
	Metric  string    `yaml:"metric"`
	Unit    string    `yaml:"unit,omitempty"`
	Buckets []float64 `yaml:"buckets"`
	// Observation is what one observation is: request, token or
	// decode-step.
	Observation string `yaml:"observation,omitempty"`
	// SuccessOnly: failed requests are never observed.
	SuccessOnly bool `yaml:"successOnly,omitempty"`
	// Configurable says how operators change the buckets; empty when fixed.
	Configurable string   `yaml:"configurable,omitempty"`
	Labels       []string `yaml:"labels,omitempty"`
	Note         string   `yaml:"note,omitempty"`
}

// Mean is a signal exported as a cumulative sum and a count.
type Mean struct {
	Sum   string `yaml:"sum"`
	Count string `yaml:"count"`
	Unit  string `yaml:"unit"`
	Note  string `yaml:"note,omitempty"`
}

// Errors says which series count requests and failed requests, and the
// policy behind it. Bad is empty when the engine counts no failures; then
// Gateway says where the errors SLI comes from.
type Errors struct {
	Total   string `yaml:"total,omitempty"`
	Bad     string `yaml:"bad,omitempty"`
	Note    string `yaml:"note,omitempty"`
	Gateway string `yaml:"gateway,omitempty"`
}

// Variant patches an engine entry for the releases from From to To
// (inclusive) or up to Before (exclusive); an absent bound is open.
type Variant struct {
	From       string                `yaml:"from,omitempty"`
	To         string                `yaml:"to,omitempty"`
	Before     string                `yaml:"before,omitempty"`
	Change     string                `yaml:"change"`
	Labels     []string              `yaml:"labels,omitempty"`
	Histograms map[string]*Histogram `yaml:"histograms,omitempty"`
	// Drop removes histograms and failure kinds by role.
	Drop   []string          `yaml:"drop,omitempty"`
	Gauges map[string]string `yaml:"gauges,omitempty"`
	Errors *Errors           `yaml:"errors,omitempty"`
	Lacks  map[string]string `yaml:"lacks,omitempty"`
}

// Change records a metric an engine renamed or removed.
type Change struct {
	Metric     string `yaml:"metric"`
	ReplacedBy string `yaml:"replacedBy,omitempty"`
	// Since is the first release with the replacement; Removed the first
	// release without Metric.
	Since   string `yaml:"since,omitempty"`
	Removed string `yaml:"removed,omitempty"`
	Note    string `yaml:"note,omitempty"`
}

// Load parses the embedded catalog.
func Load() (*Catalog, error) {
	return Parse(catalogYAML, "engine catalog")
}

// Parse reads a catalog in the embedded catalog's format; source names it
// in errors.
func Parse(data []byte, source string) (*Catalog, error) {
	var c Catalog
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(c.Engines) == 0 {
		return nil, fmt.Errorf("%s: no engines", source)
	}
	for id, e := range c.Engines {
		e.ID = id
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	}
	return &c, nil
}

// check insists on what the compiler relies on: known roles and units,
// ascending buckets, versions that parse.
func (e *Engine) check() error {
	if !isID(e.ID) {
		return fmt.Errorf("engine id %q: use lower-case letters, digits and '-'", e.ID)
	}
	check := func(where string, hs map[string]*Histogram, partial bool) error {
		for role, h := range hs {
			if !slices.Contains(Roles, role) {
				return fmt.Errorf("engine %s%s: histogram role %q is not one of %s", e.ID, where, role, strings.Join(Roles, ", "))
			}
			if !partial && h.Metric == "" {
				return fmt.Errorf("engine %s%s %s: metric is required", e.ID, where, role)
			}
			// Native histograms choose their buckets themselves.
			if !partial && len(h.Buckets) == 0 && e.HistogramType != Native || !sort.Float64sAreSorted(h.Buckets) || hasDuplicate(h.Buckets) {
				return fmt.Errorf("engine %s%s %s: buckets must be ascending", e.ID, where, role)
			}
			if h.Unit != "" && h.Unit != Seconds && h.Unit != Milliseconds {
				return fmt.Errorf("engine %s%s %s: unit %q is not seconds or milliseconds", e.ID, where, role, h.Unit)
			}
		}
		return nil
	}
	if t := e.HistogramType; t != "" && t != Classic && t != Native {
		return fmt.Errorf("engine %s: histogramType %q is not classic or native", e.ID, t)
	}
	if err := check("", e.Histograms, false); err != nil {
		return err
	}
	for role, f := range e.Failures {
		if !IsFailureKind(role) {
			return fmt.Errorf("engine %s: failure kind %q is not one of %s", e.ID, role, strings.Join(FailureKinds, ", "))
		}
		if f == nil || f.Total == "" || f.Bad == "" {
			return fmt.Errorf("engine %s failures %s: total and bad are required", e.ID, role)
		}
	}
	for _, v := range []string{e.MinVersion} {
		if _, err := parseVersion(v); v != "" && err != nil {
			return fmt.Errorf("engine %s: minVersion: %w", e.ID, err)
		}
	}
	for i, v := range e.Variants {
		where := fmt.Sprintf(" variant %d", i)
		for _, s := range []string{v.From, v.To, v.Before} {
			if _, err := parseVersion(s); s != "" && err != nil {
				return fmt.Errorf("engine %s%s: %w", e.ID, where, err)
			}
		}
		if err := check(where, v.Histograms, true); err != nil {
			return err
		}
	}
	return nil
}

// IDs lists the engine ids in order.
func (c *Catalog) IDs() []string {
	return slices.Sorted(maps.Keys(c.Engines))
}

// Engine returns an engine by id, as of its newest described release.
func (c *Catalog) Engine(id string) (*Engine, bool) {
	e, ok := c.Engines[id]
	return e, ok
}

// Merge adds the engines of another catalog; an id both define is an error.
func (c *Catalog) Merge(o *Catalog) error {
	if c.Engines == nil {
		c.Engines = map[string]*Engine{}
	}
	for _, id := range o.IDs() {
		if _, dup := c.Engines[id]; dup {
			return fmt.Errorf("engine %q is already defined", id)
		}
		c.Engines[id] = o.Engines[id]
	}
	return nil
}

// Clone returns a catalog whose engine map can be extended without
// touching c.
func (c *Catalog) Clone() *Catalog {
	out := &Catalog{Engines: make(map[string]*Engine, len(c.Engines))}
	maps.Copy(out.Engines, c.Engines)
	return out
}

// Resolve returns the engine as it is in release version (empty: the
// newest described release), with every matching variant applied.
func (c *Catalog) Resolve(id, version string) (*Engine, error) {
	e, ok := c.Engines[id]
	if !ok {
		return nil, fmt.Errorf("unknown engine %q; known engines: %s", id, strings.Join(c.IDs(), ", "))
	}
	if version == "" {
		return e, nil
	}
	v, err := parseVersion(version)
	if err != nil {
		return nil, err
	}
	if e.MinVersion != "" {
		min, _ := parseVersion(e.MinVersion)
		if compareVersions(v, min) < 0 {
			return nil, fmt.Errorf("the catalog covers %s from %s on, not %s", e.Title, e.MinVersion, version)
		}
	} else if len(e.Variants) == 0 {
		return nil, fmt.Errorf("the catalog describes %s %s only and has no version variants; remove the engine version", e.Title, e.Versions)
	}
	out := e.clone()
	var applied []string
	for _, va := range e.Variants {
		if !va.covers(v) {
			continue
		}
		out.apply(va)
		applied = append(applied, va.Change)
	}
	out.Variant = version
	if len(applied) > 0 {
		out.Versions = fmt.Sprintf("%s (%s)", version, strings.Join(applied, "; "))
	} else {
		out.Versions = version
	}
	return out, nil
}

func (va Variant) covers(v []int) bool {
	if va.From != "" {
		from, _ := parseVersion(va.From)
		if compareVersions(v, from) < 0 {
			return false
		}
	}
	if va.To != "" {
		to, _ := parseVersion(va.To)
		if compareVersions(v, to) > 0 {
			return false
		}
	}
	if va.Before != "" {
		before, _ := parseVersion(va.Before)
		if compareVersions(v, before) >= 0 {
			return false
		}
	}
	return true
}

func (e *Engine) clone() *Engine {
	out := *e
	out.Histograms = make(map[string]*Histogram, len(e.Histograms))
	for r, h := range e.Histograms {
		c := *h
		out.Histograms[r] = &c
	}
	out.Gauges = maps.Clone(e.Gauges)
	out.Lacks = maps.Clone(e.Lacks)
	out.Failures = maps.Clone(e.Failures)
	return &out
}

func (e *Engine) apply(va Variant) {
	if va.Labels != nil {
		e.Labels = va.Labels
	}
	for _, r := range va.Drop {
		delete(e.Histograms, r)
		delete(e.Failures, r)
	}
	for r, patch := range va.Histograms {
		h, ok := e.Histograms[r]
		if !ok {
			h = &Histogram{}
			e.Histograms[r] = h
		}
		if patch.Metric != "" {
			h.Metric = patch.Metric
		}
		if len(patch.Buckets) > 0 {
			h.Buckets = patch.Buckets
		}
		if patch.Unit != "" {
			h.Unit = patch.Unit
		}
		if patch.Observation != "" {
			h.Observation = patch.Observation
		}
		if patch.Note != "" {
			h.Note = patch.Note
		}
	}
	for k, g := range va.Gauges {
		if e.Gauges == nil {
			e.Gauges = map[string]string{}
		}
		e.Gauges[k] = g
	}
	if va.Errors != nil {
		e.Errors = *va.Errors
	}
	for k, l := range va.Lacks {
		if e.Lacks == nil {
			e.Lacks = map[string]string{}
		}
		e.Lacks[k] = l
	}
}

// Roles lists the latency roles the engine has a histogram for, in order.
func (e *Engine) Roles() []string {
	var out []string
	for _, r := range Roles {
		if _, ok := e.Histograms[r]; ok {
			out = append(out, r)
		}
	}
	return out
}

// SLIs lists every SLI the engine can serve: its latency roles, errors
// when it counts failed requests, and the failure kinds it counts.
func (e *Engine) SLIs() []string {
	out := e.Roles()
	if e.Errors.Bad != "" {
		out = append(out, "errors")
	}
	for _, k := range FailureKinds {
		if _, ok := e.Failures[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// Missing says why the engine cannot serve an SLI and what it has
// instead; empty when it can.
func (e *Engine) Missing(sli string) string {
	if slices.Contains(e.SLIs(), sli) {
		return ""
	}
	if sli == "errors" {
		msg := fmt.Sprintf("%s counts no failed requests", e.Title)
		if e.Errors.Gateway != "" {
			msg += "; " + e.Errors.Gateway
		}
		return msg
	}
	if l := e.Lacks[sli]; l != "" {
		return l
	}
	if IsFailureKind(sli) {
		return fmt.Sprintf("%s counts no %s; set total and bad on the objective from a gateway's counters", e.Title, failureNoun[sli])
	}
	if m, ok := e.Means[sli]; ok {
		return fmt.Sprintf("engine %s has only a mean (%s over %s), which cannot make an exact SLI", e.ID, m.Sum, m.Count)
	}
	if e.NoMetrics != "" {
		return e.NoMetrics
	}
	return fmt.Sprintf("engine %s exposes no %s histogram", e.ID, sli)
}

// failureNoun names what a failure kind counts, for messages.
var failureNoun = map[string]string{
	"incomplete": "requests finished by a token budget or an abort",
	"rejections": "requests refused at admission",
	"streams":    "streams that did not complete",
}

// LabelsOf returns the labels a metric carries.
func (e *Engine) LabelsOf(metric string) []string {
	if l, ok := e.MetricLabels[metric]; ok {
		return l
	}
	return e.Labels
}

func isID(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0 && i < len(s)-1) {
			return false
		}
	}
	return true
}

// parseVersion reads a release such as 0.10.1, v0.9.2, r24.07 or
// 0.3.5.post1 as numbers; a suffix after the numbers is ignored.
func parseVersion(s string) ([]int, error) {
	t := strings.TrimLeft(s, "vVrR")
	var out []int
	for _, part := range strings.Split(t, ".") {
		n := 0
		digits := 0
		for _, c := range part {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
			digits++
		}
		if digits == 0 {
			if len(out) > 0 {
				break
			}
			return nil, fmt.Errorf("%q is not a version such as 0.10.1", s)
		}
		out = append(out, n)
		if digits < len(part) {
			break
		}
	}
	return out, nil
}

// compareVersions orders releases; missing parts count as zero.
func compareVersions(a, b []int) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		x, y := 0, 0
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
