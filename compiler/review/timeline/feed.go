package timeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// feed is a recorded series that one SLO's rules read and another SLO of
// the service records: goodput's bounds, in the TPOT SLO's group, read the
// TTFT SLO's error ratios. A Prometheus keeps every group's recordings in
// one TSDB; the review replays each SLO in its own harness, so before the
// reader evaluates, its harness is given the recorder's latest samples of
// the series, the value the rule would read from a shared TSDB.
type feed struct {
	from     *replaySim
	selector string
}

// feedsOf lists the selectors of groups' rules whose slo matcher names
// another of the service's SLOs, each with the harness that records it.
func feedsOf(groups []*rules.Group, self *replaySim, sims []*replaySim) []feed {
	var out []feed
	seen := map[string]bool{}
	for _, g := range groups {
		for _, rule := range g.Rules() {
			for _, vs := range query.Selectors(rule.Query()) {
				for _, m := range vs.LabelMatchers {
					if m.Name != model.LabelSLO || m.Type != labels.MatchEqual || m.Value == self.slo.Name {
						continue
					}
					for _, from := range sims {
						if from.slo.Name != m.Value {
							continue
						}
						// The series as stored: no offset, no @.
						sel := (&parser.VectorSelector{Name: vs.Name, LabelMatchers: vs.LabelMatchers}).String()
						if !seen[sel] {
							seen[sel] = true
							out = append(out, feed{from: from, selector: sel})
						}
					}
				}
			}
		}
	}
	return out
}

// link finds each harness's feeds and the slo label values it records.
func (r *serviceReplay) link() {
	for _, s := range r.sims {
		s.names = recordedSLOs(s)
		s.feedsFull = feedsOf(s.full, s, r.sims)
	}
}

// evalOrder lists the harnesses in spec order, those that read another's
// recordings last, so at each step they read what was recorded at it.
func (r *serviceReplay) evalOrder() []*replaySim {
	var first, last []*replaySim
	for _, s := range r.sims {
		if len(s.feedsFull) > 0 {
			last = append(last, s)
		} else {
			first = append(first, s)
		}
	}
	return append(first, last...)
}

// copyFeeds appends to s's harness, at t, the samples of fs their
// recorders hold at t.
func (s *replaySim) copyFeeds(fs []feed, t time.Duration) error {
	if len(fs) == 0 {
		return nil
	}
	app := s.h.DB.Appender(context.Background())
	ms := prom.Epoch().Add(t).UnixMilli()
	for _, f := range fs {
		v, err := f.from.h.Query(f.selector, t)
		if err != nil {
			app.Rollback()
			return fmt.Errorf("read %s of slo %s: %w", f.selector, f.from.slo.Name, err)
		}
		for _, smp := range v {
			if _, err := app.Append(0, smp.Metric, ms, smp.F); err != nil {
				app.Rollback()
				return fmt.Errorf("copy %s of slo %s: %w", f.selector, f.from.slo.Name, err)
			}
		}
	}
	return app.Commit()
}

// recordedSLOs lists the slo label values s's harness records: its SLO's
// name, and a goodput pair's for the TPOT SLO whose group holds the pair.
func recordedSLOs(s *replaySim) []string {
	names := []string{s.slo.Name}
	for _, g := range s.full {
		for _, rule := range g.Rules() {
			if v := rule.Labels().Get(model.LabelSLO); v != "" && !slices.Contains(names, v) {
				names = append(names, v)
			}
		}
	}
	return names
}
