// Package engine is the metric catalog of LLM inference engines: which
// series an engine exposes for each SLI role, with their labels and
// histogram buckets. The facts live in catalog.yaml; this package only reads
// them.
package engine

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed catalog.yaml
var catalogYAML []byte

// Catalog is every known engine by id.
type Catalog struct {
	Engines map[string]*Engine `yaml:"engines"`
}

// Engine is one inference server's metrics.
type Engine struct {
	ID         string                `yaml:"-"`
	Title      string                `yaml:"title"`
	Versions   string                `yaml:"versions"`
	Labels     []string              `yaml:"labels"`
	Histograms map[string]*Histogram `yaml:"histograms"`
	Errors     Errors                `yaml:"errors"`
	Requests   string                `yaml:"requests"`
	Gauges     map[string]string     `yaml:"gauges"`
	Counters   map[string]string     `yaml:"counters"`
	Changes    []Change              `yaml:"changes,omitempty"`
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

// Histogram is a classic histogram in seconds.
type Histogram struct {
	Metric  string    `yaml:"metric"`
	Buckets []float64 `yaml:"buckets"`
	Note    string    `yaml:"note"`
}

// Errors says which series count requests and failed requests.
type Errors struct {
	Total string `yaml:"total"`
	Bad   string `yaml:"bad"`
	Note  string `yaml:"note"`
}

// Load parses the embedded catalog.
func Load() (*Catalog, error) {
	var c Catalog
	dec := yaml.NewDecoder(strings.NewReader(string(catalogYAML)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("engine catalog: %w", err)
	}
	for id, e := range c.Engines {
		e.ID = id
		for role, h := range e.Histograms {
			if !sort.Float64sAreSorted(h.Buckets) || len(h.Buckets) == 0 {
				return nil, fmt.Errorf("engine catalog: %s %s buckets must be ascending", id, role)
			}
		}
	}
	return &c, nil
}

// IDs lists the engine ids in order.
func (c *Catalog) IDs() []string {
	ids := make([]string, 0, len(c.Engines))
	for id := range c.Engines {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Engine returns an engine by id.
func (c *Catalog) Engine(id string) (*Engine, bool) {
	e, ok := c.Engines[id]
	return e, ok
}

// Roles lists the latency roles the engine has a histogram for, in order.
func (e *Engine) Roles() []string {
	var out []string
	for _, r := range []string{"ttft", "itl", "tpot", "e2e"} {
		if _, ok := e.Histograms[r]; ok {
			out = append(out, r)
		}
	}
	return out
}

// Bucket finds the bucket whose upper bound equals seconds, comparing as
// numbers (Prometheus 3 writes le="1.0" where an exporter wrote "1").
func (h *Histogram) Bucket(seconds float64) (float64, bool) {
	for _, b := range h.Buckets {
		if nearlyEqual(b, seconds) {
			return b, true
		}
	}
	return 0, false
}

// Neighbours returns the closest bucket bounds below and above seconds; a
// missing side is NaN.
func (h *Histogram) Neighbours(seconds float64) (below, above float64) {
	below, above = math.NaN(), math.NaN()
	for _, b := range h.Buckets {
		if b < seconds {
			below = b
		} else if b > seconds && math.IsNaN(above) {
			above = b
		}
	}
	return below, above
}

// FormatSeconds prints a bucket bound in seconds the shortest exact way.
func FormatSeconds(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func nearlyEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
