package spec

import (
	"fmt"
	"maps"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
)

// expandGoodput expands `sli: goodput`, an SLO on goodput's lower bound.
// Goodput is the share of requests within both the TTFT and the TPOT
// threshold; engines export the two latencies as separate histograms, so
// only its bounds are observable. The lower bound, 1 − (TTFT misses + TPOT
// misses) / requests, is a ratio of counters: bad events are the misses of
// both objectives added (a request that misses both counts twice, so they
// bound the requests that miss either from above), total events the TTFT
// histogram's (one observation per request, as the TPOT histogram's).
// Burn tiers, the outage tier and every backend then treat it as any ratio.
func expandGoodput(d *doc, s *Shorthand, o ShorthandObjective, path string, eng *engine.Engine, selector map[string]string, denominator string) (*v1.SLO, *Extensions, Problems) {
	if o.Threshold != "" || o.Total != "" || o.Good != "" || o.Bad != "" {
		field := "threshold"
		switch {
		case o.Threshold != "":
		case o.Total != "":
			field = "total"
		case o.Good != "":
			field = "good"
		default:
			field = "bad"
		}
		return nil, nil, Problems{d.errorf(path+"."+field, "goodput reads the ttft and tpot objectives' thresholds and queries; remove %s", field)}
	}
	if eng.IsNative() {
		return nil, nil, Problems{d.errorf(path+".sli", "goodput on native histograms is not supported yet; keep the ttft and tpot objectives (their dashboards show the bounds only on classic histograms)")}
	}
	var pair [2]int
	for r, role := range []string{"ttft", "tpot"} {
		var found []int
		hasITL := false
		for j, other := range s.Spec.Objectives {
			if other.SLI == role {
				found = append(found, j)
			}
			hasITL = hasITL || other.SLI == "itl"
		}
		if len(found) != 1 {
			msg := fmt.Sprintf("goodput's lower bound joins one ttft and one tpot objective of this spec; it has %d %s objectives", len(found), role)
			if role == "tpot" && hasITL {
				msg += "; itl observes decode steps or tokens, not requests, so its share cannot bound a share of requests: add a tpot objective"
			}
			if m := eng.Missing(role); m != "" {
				msg += fmt.Sprintf("; engine %s cannot measure %s: %s", engineName(eng), role, m)
			}
			return nil, nil, Problems{d.errorf(path+".sli", "%s", msg)}
		}
		pair[r] = found[0]
	}
	var queries [2][2]string // total, bad per objective
	for r, j := range pair {
		other := s.Spec.Objectives[j]
		otherPath := fmt.Sprintf("spec.objectives[%d]", j)
		if sel := mergeSelector(s.Spec.Selector, other.Selector); !maps.Equal(sel, selector) {
			return nil, nil, Problems{d.errorf(path+".selector", "goodput joins objectives of one selector, but %s.selector differs; give goodput the same selector", otherPath)}
		}
		// Problems of the latency objective are reported at its own index.
		slo, _, ps := expandObjective(d, s, other, otherPath, eng, selector, denominator)
		if slo == nil || len(ps) > 0 {
			return nil, nil, nil
		}
		ratio := slo.Spec.Indicator.Spec.RatioMetric
		total := queryOf(ratio.Total)
		queries[r][0] = total
		// Summed before subtracting: a bucket carries le, its count does
		// not, so the series would not match one to one.
		if ratio.Bad != nil {
			queries[r][1] = fmt.Sprintf("sum(%s)", queryOf(ratio.Bad))
		} else {
			queries[r][1] = fmt.Sprintf("(sum(%s) - sum(%s))", total, queryOf(ratio.Good))
		}
	}
	bad := fmt.Sprintf("%s + %s", queries[0][1], queries[1][1])
	name := o.Name
	if name == "" {
		name = o.sloName(s.Metadata.Name)
	}
	// An errors objective with the gateway's queries is the same ratio SLO.
	slo, ext, ps := expandObjective(d, s, ShorthandObjective{SLI: "errors", Name: name, DisplayName: o.DisplayName, Target: o.Target,
		ScaleOnBurn: o.ScaleOnBurn, Total: queries[0][0], Bad: bad}, path, eng, nil, denominator)
	if slo == nil {
		return nil, nil, ps
	}
	ext.SLI = model.SLIGoodput
	t, p := s.Spec.Objectives[pair[0]], s.Spec.Objectives[pair[1]]
	slo.Spec.Description = fmt.Sprintf("Lower bound of %s goodput: the share of requests with TTFT at or under %s and TPOT at or under %s is at least 1 − (TTFT misses + TPOT misses) / requests. Engines export the two latencies as separate histograms, so the joint share is not observable; its bounds are.",
		eng.Title, t.Threshold, p.Threshold)
	return slo, ext, ps
}

// queryOf is a ratio metric's Prometheus query.
func queryOf(m *v1.SLIMetricSpec) string {
	if m == nil {
		return ""
	}
	q, _ := m.MetricSource.Spec["query"].(string)
	return q
}
