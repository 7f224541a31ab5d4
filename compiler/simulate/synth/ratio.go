package synth

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
)

// rejections is a counter the bad query adds beside the requests counter:
// requests refused before they could finish.
func rejections(slo model.SLO, requests string) string {
	if slo.SLI.Bad == nil {
		return ""
	}
	for _, n := range engine.MetricNames(slo.SLI.Bad.Expr) {
		if n != requests {
			return n
		}
	}
	return ""
}

// ratioSeries derives series for a plain ratio SLI from its selectors: one
// series per selector of the good (or bad) query, one per selector of the
// total query, with linear forms solved so that total = n and bad = k.
func ratioSeries(slo model.SLO) ([]Series, error) {
	part, good := slo.SLI.Bad, false
	if part == nil {
		part, good = slo.SLI.Good, true
	}
	if part == nil || slo.SLI.Total == nil {
		return nil, fmt.Errorf("the SLI needs a total and a good or bad query")
	}
	totalSel, err := selectorsOf(slo.SLI.Total.Expr)
	if err != nil {
		return nil, err
	}
	partSel, err := selectorsOf(part.Expr)
	if err != nil {
		return nil, err
	}
	var groupA, groupB []labels.Labels
	for _, s := range partSel {
		v, err := Satisfying(s.matchers)
		if err != nil {
			return nil, err
		}
		groupA = appendUnique(groupA, labels.FromMap(v))
	}
	for _, s := range totalSel {
		v, err := Satisfying(s.matchers)
		if err != nil {
			return nil, err
		}
		// A total series must be distinguishable from the good/bad ones:
		// break one matcher of the partial query it would also satisfy.
		ls := labels.FromMap(v)
		for _, ps := range partSel {
			if !ps.matches(ls) {
				continue
			}
			for _, m := range ps.matchers {
				if bad, ok := violating(m); ok && s.matches(labels.FromMap(with(v, m.Name, bad))) {
					v = with(v, m.Name, bad)
					break
				}
			}
			ls = labels.FromMap(v)
		}
		// A total that sums the bad counter with others (success + failure)
		// selects the bad series itself: it is one series, not two.
		if containsLabels(groupA, ls) {
			continue
		}
		groupB = appendUnique(groupB, ls)
	}
	coef := func(sels []selector, group []labels.Labels) float64 {
		c := 0.0
		for _, ls := range group {
			for _, s := range sels {
				if s.matches(ls) {
					c += s.sign
				}
			}
		}
		return c
	}
	// x = n - k for a good query, k for a bad one.
	xN, xK := 0.0, 1.0
	if good {
		xN, xK = 1, -1
	}
	// The total's own events go on its first series when that solves
	// alone: a total that sums counters (success + failure) then keeps the
	// others flat, so they count nothing for the service's other SLOs (a
	// rejections SLO's traffic is no failure of its errors SLO).
	carriers := [][]labels.Labels{groupB}
	if len(groupB) > 1 {
		carriers = [][]labels.Labels{groupB[:1], groupB}
	}
	var aN, aK, bN, bK float64
	var carry []labels.Labels
	var problem error
	for _, c := range carriers {
		tA, tB := coef(totalSel, groupA), coef(totalSel, c)
		xA, xB := coef(partSel, groupA), coef(partSel, c)
		det := tA*xB - tB*xA
		if det == 0 {
			problem = fmt.Errorf("cannot synthesize series for SLI %q over %q: the selectors do not tell good or bad events from the total", part.Expr, slo.SLI.Total.Expr)
			continue
		}
		// a = (n·xB - x·tB)/det, b = (tA·x - xA·n)/det, per unit of n and of k.
		aN, aK = (xB-xN*tB)/det, (-xK*tB)/det
		bN, bK = (tA*xN-xA)/det, (tA*xK)/det
		problem = nil
		for _, nk := range [][2]float64{{1, 0}, {1, 1}} {
			if aN*nk[0]+aK*nk[1] < 0 || bN*nk[0]+bK*nk[1] < 0 {
				problem = fmt.Errorf("cannot synthesize series for SLI %q over %q: counters would have to decrease", part.Expr, slo.SLI.Total.Expr)
			}
		}
		if problem == nil {
			carry = c
			break
		}
	}
	if problem != nil {
		return nil, problem
	}
	var out []Series
	for _, ls := range groupA {
		out = append(out, ratioSeriesOf(ls, partSel, aN, aK))
	}
	for _, ls := range groupB {
		if containsLabels(carry, ls) {
			out = append(out, ratioSeriesOf(ls, totalSel, bN, bK))
		} else {
			out = append(out, ratioSeriesOf(ls, totalSel, 0, 0))
		}
	}
	return out, nil
}

// ratioSeriesOf is one derived series: a native histogram whose count is
// the linear form when a histogram_count selector reads it, else a counter.
func ratioSeriesOf(ls labels.Labels, sels []selector, coefN, coefK float64) Series {
	for _, s := range sels {
		if s.native && s.matches(ls) {
			// Any latency does: only the count is read.
			return Series{Labels: ls, schema: model.DefaultNativeSchema, hist: []observation{{value: 1, coefN: coefN, coefK: coefK}}}
		}
	}
	return Series{Labels: ls, CoefN: coefN, coefK: coefK}
}

func with(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

func appendUnique(list []labels.Labels, ls labels.Labels) []labels.Labels {
	if containsLabels(list, ls) {
		return list
	}
	return append(list, ls)
}

func containsLabels(list []labels.Labels, ls labels.Labels) bool {
	for _, l := range list {
		if labels.Equal(l, ls) {
			return true
		}
	}
	return false
}

// otherModels returns label overrides for extra models the SLO does not
// select: the first equality matcher of the engine selector (or of the total
// query) gets other values.
func otherModels(slo model.SLO, n int) ([]map[string]string, error) {
	if n <= 0 {
		return nil, nil
	}
	var ms []*labels.Matcher
	if slo.Inference != nil && slo.Inference.Selector != "" {
		sel, err := query.NewParser().ParseMetricSelector("{" + slo.Inference.Selector + "}")
		if err != nil {
			return nil, err
		}
		ms = sel
	} else if q := countedQuery(slo); q != "" {
		sels, err := selectorsOf(q)
		if err != nil {
			return nil, err
		}
		ms = sels[0].matchers
	}
	for _, m := range ms {
		if m.Name == query.MetricNameLabel || m.Type != labels.MatchEqual {
			continue
		}
		var out []map[string]string
		for i := 1; i <= n; i++ {
			out = append(out, map[string]string{m.Name: fmt.Sprintf("%s-other-%d", m.Value, i)})
		}
		return out, nil
	}
	// Nothing to vary: extra models would be the same series.
	return nil, nil
}
