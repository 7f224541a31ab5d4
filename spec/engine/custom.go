package engine

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Custom checks an engine a team declares itself (in a spec or a catalog
// file) and names it id.
func Custom(id string, e *Engine) (*Engine, error) {
	c := *e
	c.ID = id
	c.Title = cmp.Or(c.Title, id)
	if err := c.check(); err != nil {
		return nil, err
	}
	if len(c.Histograms) == 0 && c.Errors.Bad == "" && len(c.Failures) == 0 && len(c.Gauges) == 0 {
		return nil, fmt.Errorf("engine %s declares no histogram, error counter, failure kind or gauge", id)
	}
	return &c, nil
}

// Marshal writes an engine entry in the catalog's format.
func (e *Engine) Marshal() (string, error) {
	out, err := yaml.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("engine %s: %w", e.ID, err)
	}
	return string(out), nil
}

// ParseEngine reads one engine entry written by Marshal.
func ParseEngine(id, text string) (*Engine, error) {
	var e Engine
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("engine %s: %w", id, err)
	}
	return Custom(id, &e)
}

// WithBuckets returns the engine with the histogram buckets a deployment
// changed, by SLI role (bounds in the histogram's unit), so that every check
// uses them. notes says which changed histograms the catalog knows no
// setting for (their buckets may still have been patched).
func (e *Engine) WithBuckets(buckets map[string][]float64) (out *Engine, notes []string, err error) {
	if len(buckets) == 0 {
		return e, nil, nil
	}
	out = e.clone()
	for _, role := range slices.Sorted(maps.Keys(buckets)) {
		h, ok := out.Histograms[role]
		if !ok {
			return nil, nil, fmt.Errorf("%s: %s has no %s histogram; it has %s", role, e.Title, role, strings.Join(e.Roles(), ", "))
		}
		b := buckets[role]
		if len(b) == 0 || !sort.Float64sAreSorted(b) || hasDuplicate(b) {
			return nil, nil, fmt.Errorf("%s: the buckets of %s must be ascending and distinct, such as [0.1, 0.25, 0.5, 1]", role, h.Metric)
		}
		for _, f := range b {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, nil, fmt.Errorf("%s: %v is not a bucket bound; +Inf is implied", role, f)
			}
		}
		h.Buckets = append([]float64(nil), b...)
		if h.Configurable == "" {
			notes = append(notes, fmt.Sprintf("%s: the catalog knows no setting of %s that changes the buckets of %s; the checks use the ones stated", role, e.Title, h.Metric))
		}
	}
	return out, notes, nil
}
