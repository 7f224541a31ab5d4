// Package budget reads the error budget an SLO has left from the recording
// rules inferslo generates, as they run in a Prometheus-compatible server:
// the gate a release pipeline asks before it ships.
package budget

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferslo/inferslo/compiler/backtest"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/safetext"

	prommodel "github.com/prometheus/common/model"
)

// Group is the budget one group of an SLO has left (the whole SLO when it
// has no groupBy).
type Group struct {
	SLO     string `json:"slo"`
	Service string `json:"service"`
	// Window is the window label of the series read: the SLO window
	// ("28d") or the calendar period ("1M").
	Window string `json:"window"`
	// Labels are the group's values of the SLO's groupBy labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Remaining is the share of the budget left: 1 untouched, 0 spent,
	// negative overspent.
	Remaining float64 `json:"remaining"`
	// Below is set when Remaining is under the threshold asked for.
	Below bool `json:"below,omitempty"`
}

// Report is the budget left of every group of every SLO at one time.
type Report struct {
	At time.Time `json:"at"`
	// FailBelow is the threshold, a share of the budget (0.2 for 20%);
	// nil when none was asked for.
	FailBelow *float64 `json:"failBelow,omitempty"`
	Groups    []Group  `json:"groups"`
}

// Below counts the groups under the threshold.
func (r Report) Below() int {
	n := 0
	for _, g := range r.Groups {
		if g.Below {
			n++
		}
	}
	return n
}

// Read asks the server for the budget every SLO of the set has left at
// at, through the same query the dashboards' budget panels draw
// (model.BudgetQuery). An SLO the server holds no budget series of is an
// error naming it: a gate must not pass on a budget it cannot see.
// failBelow, when not nil, is the share under which a group is Below.
func Read(ctx context.Context, set model.Set, src backtest.Source, at time.Time, failBelow *float64) (Report, error) {
	r := Report{At: at.UTC(), FailBelow: failBelow, Groups: []Group{}}
	var errs []error
	for _, slo := range set.SLOs {
		expr := model.BudgetQuery(slo)
		v, err := src.Instant(ctx, expr, at)
		if err != nil {
			return Report{}, fmt.Errorf("slo %s: %w", slo.Name, err)
		}
		if len(v) == 0 {
			errs = append(errs, fmt.Errorf("slo %s: the server holds no %s at %s; valid: the rule files inferslo compile writes, loaded into that server (or its ruler) and evaluated since the SLO had traffic", slo.Name, expr, at.UTC().Format(time.RFC3339)))
			continue
		}
		var groups []Group
		for _, s := range v {
			g := Group{SLO: slo.Name, Service: slo.Service.Name, Window: string(s.Metric[model.LabelWindow])}
			for _, l := range slo.GroupBy {
				if g.Labels == nil {
					g.Labels = map[string]string{}
				}
				g.Labels[l] = string(s.Metric[prommodel.LabelName(l)])
			}
			f := float64(s.Value)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				errs = append(errs, fmt.Errorf("slo %s%s: the budget left is %v, not a number to gate on", slo.Name, groupText(g.Labels), f))
				continue
			}
			g.Remaining = f
			g.Below = failBelow != nil && f < *failBelow
			groups = append(groups, g)
		}
		slices.SortFunc(groups, func(a, b Group) int { return cmp.Compare(groupText(a.Labels), groupText(b.Labels)) })
		r.Groups = append(r.Groups, groups...)
	}
	if len(errs) > 0 {
		return Report{}, errors.Join(errs...)
	}
	return r, nil
}

// groupText names a group: " {model_name=\"llama\"}", or nothing for an
// SLO of one group. The values are the server's, so they are quoted.
func groupText(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + safetext.Quote(labels[k])
	}
	return " {" + strings.Join(parts, ",") + "}"
}

// Percent is a share as a percentage with one decimal.
func Percent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// WriteTable prints one line per group: the SLO, its group, the window and
// the budget left, and with a threshold whether the group passes it.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "SLO\tSERVICE\tGROUP\tWINDOW\tBUDGET LEFT"
	if r.FailBelow != nil {
		header += "\tGATE " + Percent(*r.FailBelow)
	}
	fmt.Fprintln(tw, header)
	for _, g := range r.Groups {
		group := strings.TrimPrefix(groupText(g.Labels), " ")
		group = cmp.Or(group, "-")
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", g.SLO, g.Service, group, safetext.Printable(g.Window), Percent(g.Remaining))
		switch {
		case r.FailBelow == nil:
		case g.Below:
			line += "\tbelow"
		default:
			line += "\tpass"
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
