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
	query := instantQueries(t, load.String())
	var result promql.Vector
	run := func(q string) {
		t.Helper()
		var err error
		if result, err = query(q); err != nil {
			t.Fatal(err)
		}
	}
	matcher := serviceRegexMatcher(set.Services())
	for _, tt := range []struct {
		name  string
		query string
		want  func(model.SLO) (float64, bool)
	}{
		{"budget left", budgetQuery(matcher), func(model.SLO) (float64, bool) { return 0, false }},
		{"burn rate over the base window", baseBurnQuery(matcher, nil), func(s model.SLO) (float64, bool) {
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

// TestOverviewQueriesInAGlobalViewGiveOneSeriesPerSLOAndCluster loads what
// two Prometheus servers with a cluster external label record, as Thanos
// Query or a federating Prometheus shows them: with --external-labels
// cluster every overview query gives one series per SLO and cluster, each
// burn rate its own cluster's; without it the burn join finds two
// objectives per SLO and Prometheus refuses the query.
func TestOverviewQueriesInAGlobalViewGiveOneSeriesPerSLOAndCluster(t *testing.T) {
	set := fixtureSet(t)
	var load strings.Builder
	load.WriteString("load 1m\n")
	want := map[string]float64{}
	for c, cluster := range []string{"a", "b"} {
		for _, slo := range set.SLOs {
			g, err := rules.Group(slo, nil)
			if err != nil {
				t.Fatal(err)
			}
			var ratio, objective float64
			for i, r := range g.Rules {
				if r.Record == "" {
					continue
				}
				v := float64(i+1) / 1000 * float64(c+1)
				if r.Record == model.Objective {
					v = 0.99 - 0.01*float64(c)
					objective = v
				}
				if r.Record == model.ErrorRatio && r.Labels[model.LabelWindow] == model.FormatDuration(slo.BaseWindow()) {
					ratio = v
				}
				ls := []string{fmt.Sprintf("cluster=%q", cluster)}
				for k, val := range r.Labels {
					ls = append(ls, fmt.Sprintf("%s=%q", k, val))
				}
				sort.Strings(ls)
				fmt.Fprintf(&load, "  %s{%s} %v\n", r.Record, strings.Join(ls, ","), v)
			}
			want[slo.Name+"/"+cluster] = ratio / (1 - objective)
		}
	}
	run := instantQueries(t, load.String())
	matcher := serviceRegexMatcher(set.Services())
	if _, err := run(baseBurnQuery(matcher, nil)); err == nil {
		t.Error("the burn query without the cluster label joins two clusters' objectives, yet Prometheus answered")
	}
	for _, q := range []string{budgetQuery(matcher), baseBurnQuery(matcher, []string{"cluster"})} {
		res, err := run(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		seen := map[string]int{}
		for _, s := range res {
			key := s.Metric.Get(model.LabelSLO) + "/" + s.Metric.Get("cluster")
			seen[key]++
			if strings.Contains(q, "group_left") && s.F != want[key] {
				t.Errorf("%s: burn %v, want %v (its own cluster's ratio over its own objective)", key, s.F, want[key])
			}
		}
		if len(seen) != 2*len(set.SLOs) || len(res) != 2*len(set.SLOs) {
			t.Errorf("%s: %d series over %d SLO-cluster pairs, want one for each of %d", q, len(res), len(seen), 2*len(set.SLOs))
		}
	}
	b, err := NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	b.ExternalLabels = []string{"cluster"}
	files, err := b.Overview(set)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files[0].Data), `{{cluster}}`) {
		t.Error("the overview's legends do not name the cluster")
	}
}

// instantQueries loads a promqltest series text and returns what runs an
// instant query at its first sample, with the engine's error.
func instantQueries(t *testing.T, load string) func(q string) (promql.Vector, error) {
	ll, err := promqltest.NewLazyLoader(load, promqltest.LazyLoaderOpts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ll.Close() })
	at := time.Unix(0, 0).UTC()
	return func(q string) (promql.Vector, error) {
		var out promql.Vector
		var qerr error
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
				qerr = res.Err
				return
			}
			out, qerr = res.Vector()
		})
		return out, qerr
	}
}
