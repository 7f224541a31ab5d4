package prom

import (
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/rules"
)

// GroupAlertStates reads the state of every alert instance after an
// evaluation, by the group its labels name (`model_name="x"`; empty values
// for an alert without the grouping labels).
func GroupAlertStates(h *Harness, groupBy []string) map[string]map[AlertKey]rules.AlertState {
	out := map[string]map[AlertKey]rules.AlertState{}
	h.eachAlert(func(key AlertKey, active []*rules.Alert) {
		for _, a := range active {
			name := groupName(a.Labels, groupBy)
			if out[name] == nil {
				out[name] = map[AlertKey]rules.AlertState{}
			}
			if a.State > out[name][key] {
				out[name][key] = a.State
			}
		}
	})
	return out
}

// groupName names the group a label set belongs to: `model_name="x"`, the
// grouping labels in order, joined by commas.
func groupName(ls labels.Labels, groupBy []string) string {
	parts := make([]string, len(groupBy))
	for i, l := range groupBy {
		parts[i] = l + "=" + strconv.Quote(ls.Get(l))
	}
	return strings.Join(parts, ",")
}

// Firing tells whether an alert of the given name fires for the labels.
func Firing(h *Harness, name string, ls map[string]string) bool {
	for _, g := range h.Groups {
		for _, r := range g.Rules() {
			ar, ok := r.(*rules.AlertingRule)
			if !ok || ar.Name() != name {
				continue
			}
			for _, a := range ar.ActiveAlerts() {
				if a.State == rules.StateFiring && Matches(a.Labels, ls) {
					return true
				}
			}
		}
	}
	return false
}

func Matches(l labels.Labels, want map[string]string) bool {
	for k, v := range want {
		if l.Get(k) != v {
			return false
		}
	}
	return true
}
