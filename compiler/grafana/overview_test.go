package grafana

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// TestOverviewQueriesSelectEverySLOOnce loads the series the rules record
// for every SLO (each error-ratio window and the objective with its own
// value, plus SLOs of another compilation, one of them a namesake of an SLO
// in another service) and runs the overview's queries: each gives exactly
// one series per SLO of the compilation, the burn rate that of its base
// window over its own budget.
func TestOverviewQueriesSelectEverySLOOnce(t *testing.T) {
	set := fixtureSet(t)
	stranger := set.SLOs[0]
	stranger.Name, stranger.Service.Name = "other-ttft", "other"
	namesake := set.SLOs[0]
	namesake.Service.Name = "other"
	strangers := []model.SLO{stranger, namesake}
	var load strings.Builder
	load.WriteString("load 1m\n")
	baseRatio, objective := map[string]float64{}, map[string]float64{}
	for _, slo := range append(append([]model.SLO{}, set.SLOs...), strangers...) {
		g, err := rules.Group(slo, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range g.Rules {
			if r.Record == "" {
				continue
			}
			v := float64(i + 1)
			own := slo.Service.Name != "other"
			if !own {
				v += 1000
			}
			switch {
			case !own:
			case r.Record == model.ErrorRatio && r.Labels[model.LabelWindow] == model.FormatDuration(slo.BaseWindow()):
				baseRatio[slo.Name] = v
			case r.Record == model.Objective:
				objective[slo.Name] = v
			}
			var ls []string
			for k, val := range r.Labels {
				ls = append(ls, fmt.Sprintf("%s=%q", k, val))
			}
			sort.Strings(ls)
			fmt.Fprintf(&load, "  %s{%s} %v\n", r.Record, strings.Join(ls, ","), v)
		}
	}
	ll, err := promqltest.NewLazyLoader(load.String(), promqltest.LazyLoaderOpts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ll.Close() })
	at := time.Unix(0, 0).UTC()
	var result promql.Vector
	run := func(q string) {
		t.Helper()
		ll.WithSamplesTill(at, func(err error) {
			if err != nil {
				t.Fatal(err)
			}
			query, err := ll.QueryEngine().NewInstantQuery(context.Background(), ll.Storage(), nil, q, at)
			if err != nil {
				t.Fatal(err)
			}
			defer query.Close()
			res := query.Exec(context.Background())
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			result, err = res.Vector()
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	matcher := serviceRegexMatcher(set.Services())
	for _, tt := range []struct {
		name  string
		query string
		want  func(model.SLO) (float64, bool)
	}{
		{"budget left", budgetQuery(matcher), func(model.SLO) (float64, bool) { return 0, false }},
		{"burn rate over the base window", baseBurnQuery(matcher), func(s model.SLO) (float64, bool) {
			return baseRatio[s.Name] / (1 - objective[s.Name]), true
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run(tt.query)
			seen := map[string]int{}
			for _, s := range result {
				slo := s.Metric.Get(model.LabelSLO)
				seen[slo]++
				for _, want := range set.SLOs {
					if want.Name != slo {
						continue
					}
					if v, check := tt.want(want); check && s.F != v {
						t.Errorf("%s: %s = %v, want %v (the base window's)", slo, s.Metric, s.F, v)
					}
				}
			}
			for _, s := range set.SLOs {
				if seen[s.Name] != 1 {
					t.Errorf("SLO %s: %d series, want 1", s.Name, seen[s.Name])
				}
			}
			if len(result) != len(set.SLOs) {
				t.Errorf("%d series for %d SLOs: %v", len(result), len(set.SLOs), result)
			}
		})
	}
}
