// Package ruler describes the rule evaluators inferslo writes rule groups
// for and lints rule files of: the keys each adds to Prometheus' rule file
// format, the limits it puts on a tenant's groups by default, and the
// functions its query language lacks.
package ruler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/VictoriaMetrics/metricsql"
	"github.com/prometheus/prometheus/model/rulefmt"
)

// Target is one rule evaluator.
type Target struct {
	Name string
	// MaxRulesPerGroup and MaxGroupsPerTenant are the evaluator's default
	// limits; 0 is none. Mimir's are its -ruler.max-rules-per-rule-group
	// and -ruler.max-rule-groups-per-tenant; Cortex ships both off.
	MaxRulesPerGroup, MaxGroupsPerTenant int
	// FileKeys and GroupKeys are the keys it reads beyond Prometheus' own,
	// at the top of a file and in a group.
	FileKeys, GroupKeys []string
	// MetricsQL is set for an evaluator that reads its expressions as
	// MetricsQL (vmalert): mostly PromQL, but without native histograms
	// (no histogram_count, histogram_sum or histogram_fraction).
	MetricsQL bool
}

// Targets lists every evaluator, Prometheus first.
func Targets() []Target {
	return []Target{
		{Name: "prometheus"},
		{Name: "thanos", GroupKeys: []string{"partial_response_strategy"}},
		{Name: "mimir", MaxRulesPerGroup: 20, MaxGroupsPerTenant: 70,
			FileKeys:  []string{"namespace"},
			GroupKeys: []string{"source_tenants", "evaluation_delay", "align_evaluation_time_on_interval"}},
		{Name: "cortex", FileKeys: []string{"namespace"}, GroupKeys: []string{"source_tenants"}},
		{Name: "vmalert", MetricsQL: true},
	}
}

// Names lists the evaluators' names.
func Names() []string {
	var out []string
	for _, t := range Targets() {
		out = append(out, t.Name)
	}
	return out
}

// Lookup finds an evaluator by name; "" is Prometheus.
func Lookup(name string) (Target, error) {
	name = cmp.Or(name, "prometheus")
	ts := Targets()
	if i := slices.IndexFunc(ts, func(t Target) bool { return t.Name == name }); i >= 0 {
		return ts[i], nil
	}
	return Target{}, fmt.Errorf("%q is not a ruler inferslo knows; write one of %s", name, strings.Join(Names(), ", "))
}

// Reads tells whether the evaluator reads key at place ("file" or
// "group") beyond Prometheus' own keys.
func (t Target) Reads(place, key string) bool {
	switch place {
	case "file":
		return slices.Contains(t.FileKeys, key)
	case "group":
		return slices.Contains(t.GroupKeys, key)
	}
	return false
}

// Evaluates tells why the evaluator cannot run an expression, nil when it
// can: a MetricsQL evaluator parses it with VictoriaMetrics' own parser;
// the others read PromQL, which inferslo's expressions already are.
func (t Target) Evaluates(expr string) error {
	if !t.MetricsQL {
		return nil
	}
	if _, err := metricsql.Parse(expr); err != nil {
		return fmt.Errorf("%s cannot evaluate the expression: %w", t.Name, err)
	}
	return nil
}

// EvaluatesGroups is Evaluates for every rule of the groups.
func (t Target) EvaluatesGroups(groups []rulefmt.RuleGroup) error {
	for _, g := range groups {
		for _, r := range g.Rules {
			if err := t.Evaluates(r.Expr); err != nil {
				return fmt.Errorf("group %s, rule %s: %w", g.Name, r.Record+r.Alert, err)
			}
		}
	}
	return nil
}
