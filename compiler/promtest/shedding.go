package promtest

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/rules"
)

// PromQLTest is one promtool expression test: the samples expr returns at
// eval_time.
type PromQLTest struct {
	Expr       string           `yaml:"expr"`
	EvalTime   string           `yaml:"eval_time"`
	ExpSamples []ExpectedSample `yaml:"exp_samples"`
}

// ExpectedSample is one sample of an expression test.
type ExpectedSample struct {
	Labels string  `yaml:"labels"`
	Value  float64 `yaml:"value"`
}

// shedPhase is a stretch of a shedding test's traffic in the first group:
// where the slow requests' first tokens land, or no traffic at all.
type shedPhase int

const (
	calm    shedPhase = iota // every first token within the threshold
	between                  // the objective's quantile above the threshold, below factor × threshold
	slow                     // the objective's quantile above factor × threshold
	idle                     // no requests
)

// sheddingTests are the tests of the load-shedding recordings of a TTFT SLO
// on a classic histogram: each signal stays 0 while the quantile is within
// the threshold, while it is above the threshold but below the signal's
// multiple, during a spike shorter than the hold, and without traffic; it
// is 1 once the quantile has stayed above the multiple for the hold. A
// grouped SLO's second group stays calm, and its signal 0.
func (b builder) sheddingTests(slo model.SLO) ([]Test, error) {
	sh, inf := slo.Alerting.Shedding, slo.Inference
	if sh == nil || inf == nil || inf.Role != "ttft" || inf.Native {
		// A native histogram's buckets are its schema's, not le labels
		// the test can place the multiple between.
		return nil, nil
	}
	base, ok := selectorLabels(inf.Selector)
	if !ok {
		return nil, nil
	}
	var out []Test
	for _, s := range []struct {
		name, what string
		sig        model.ShedSignal
	}{{rules.LoadShed, "load shedding", sh.Shed}, {rules.ContextReduce, "context reduction", sh.ReduceContext}} {
		rule, ok := b.recordRule(slo, s.name)
		if !ok {
			return nil, fmt.Errorf("no %s recording in the rules", s.name)
		}
		out = append(out, b.sheddingTest(slo, base, rule, s.what, s.sig))
	}
	return out, nil
}

// sheddingTest builds one signal's test. Each scrape brings n requests; in
// the slow phases 2 × budget of them are slow, so the objective's quantile
// sits halfway into the bucket they land in: between threshold and
// factor × threshold, or between that and twice it.
func (b builder) sheddingTest(slo model.SLO, base map[string]string, rule map[string]string, what string, sig model.ShedSignal) Test {
	inf := slo.Inference
	scrape := slo.Scrape()
	window := 4 * scrape // the rule's rate window
	// Phases last whole evaluations and whole scrapes.
	unit := time.Duration(lcm(int64(scrape/time.Second), int64(b.eval/time.Second))) * time.Second
	units := func(d time.Duration) time.Duration { return time.Duration(math.Ceil(float64(d)/float64(unit))) * unit }
	hold := max(sig.For, scrape)
	type phase struct {
		kind shedPhase
		len  time.Duration
	}
	type check struct {
		at   time.Duration
		want float64
	}
	var phases []phase
	var checks []check
	now := time.Duration(0)
	add := func(k shedPhase, d time.Duration, want ...float64) {
		phases = append(phases, phase{k, d})
		now += d
		for _, w := range want {
			checks = append(checks, check{now, w})
		}
	}
	clear := units(2 * window)
	add(calm, clear, 0)
	add(between, clear, 0)
	// A spike one scrape shorter than the hold: the quantile is above the
	// multiple at fewer scrapes than the hold holds. Only a hold longer
	// than half the rate window (plus a scrape) leaves room for a spike
	// the quantile notices at all.
	if spike := sig.For - scrape; sig.For > scrape && spike > window/2 {
		add(calm, clear)
		from := now
		add(slow, spike)
		// Calm again until the evaluations align, and long enough for the
		// rate window to forget the spike.
		rest := units(now+window+hold+unit) - now
		add(calm, rest)
		for at := from + unit; at <= now; at += unit {
			checks = append(checks, check{at, 0})
		}
	}
	add(slow, units(window+hold+scrape), 1)
	add(idle, units(window+hold+scrape), 0)

	budget := slo.ErrorBudget().Float()
	n := math.Round(50 / budget)
	slowN := math.Round(2 * budget * n)
	threshold := inf.NativeThreshold()
	multiple := threshold.Mul(sig.Factor)
	two := model.NewDecimal(2, 1)
	// The buckets: the threshold, the multiple and twice it, each phase's
	// slow requests finishing within the next bucket up (between: the
	// multiple; slow: twice it). A signal whose multiple lies inside one of
	// the engine's buckets interpolates within that bucket, so the test's
	// histogram has the engine's buckets there instead: the slow requests
	// of the between phase finish within the bucket below the multiple, or
	// (when that is the threshold's) just enough of them inside the
	// multiple's bucket to put the quantile below the multiple, and those
	// of the slow phase past that bucket.
	bounds := []model.Decimal{threshold, multiple, multiple.Mul(two)}
	betweenAt, slowAt, betweenN := multiple, multiple.Mul(two), slowN
	if sb, ok := rules.ShedBucketsOf(inf, multiple); ok && sb.Between() {
		bounds = []model.Decimal{threshold, sb.Hi, sb.Hi.Mul(two)}
		betweenAt, slowAt = sb.Hi, sb.Hi.Mul(two)
		if sb.Lo.Cmp(threshold) > 0 {
			bounds = []model.Decimal{threshold, sb.Lo, sb.Hi, sb.Hi.Mul(two)}
			betweenAt = sb.Lo
		} else {
			// The quantile sits at 1 − budget·n/k of the bucket; half the
			// multiple's place in it keeps it below.
			f := multiple.Sub(sb.Lo).Float() / sb.Hi.Sub(sb.Lo).Float()
			betweenN = math.Floor(budget * n / (1 - f/2))
		}
	}
	// le values as a scrape writes them (1.0, not 1), as the rules match them.
	var les []string
	for _, d := range bounds {
		les = append(les, labels.FormatOpenMetricsFloat(d.Float()))
	}
	les = append(les, "+Inf")
	// increments are each bucket's growth per scrape in a phase: every
	// request but the phase's slow ones, which finish within at.
	increments := func(k shedPhase) []float64 {
		out := make([]float64, len(les))
		for i := range les {
			switch {
			case k == idle:
			case k == between && i < len(bounds) && bounds[i].Cmp(betweenAt) < 0:
				out[i] = n - betweenN
			case k == slow && i < len(bounds) && bounds[i].Cmp(slowAt) < 0:
				out[i] = n - slowN
			default:
				out[i] = n
			}
		}
		return out
	}

	groups := b.shedGroups(slo, base)
	t := Test{Name: fmt.Sprintf("%s: %s starts once TTFT p%s has stayed above %s× the threshold (%s) for %s, not before, not below it, not without traffic%s",
		slo.Name, what, strings.TrimSuffix(slo.Objective.Percent(), "%"), sig.Factor, multiple, model.FormatDuration(sig.For), shedGroupsNote(slo, groups)),
		Interval: model.FormatDuration(scrape)}
	for gi, g := range groups {
		for bi, le := range les {
			var vals []float64
			v := 0.0
			vals = append(vals, v)
			for _, p := range phases {
				kind := p.kind
				if gi > 0 && kind != idle {
					kind = calm
				}
				for range int(p.len / scrape) {
					v += increments(kind)[bi]
					vals = append(vals, v)
				}
			}
			ls := maps.Clone(base)
			maps.Copy(ls, g)
			ls["le"] = le
			ls[query.MetricNameLabel] = inf.Histogram + "_bucket"
			t.InputSeries = append(t.InputSeries, Series{Series: seriesName(labels.FromMap(ls)), Values: expanding(vals)})
			if le == "+Inf" {
				// The count, which a signal at a bucket divides by.
				delete(ls, "le")
				ls[query.MetricNameLabel] = inf.Histogram + "_count"
				t.InputSeries = append(t.InputSeries, Series{Series: seriesName(labels.FromMap(ls)), Values: expanding(vals)})
			}
		}
	}
	expr := fmt.Sprintf("%s{%s=%q}", rule[query.MetricNameLabel], model.LabelSLO, slo.Name)
	for _, c := range checks {
		var exp []ExpectedSample
		for gi, g := range groups {
			ls := maps.Clone(rule)
			maps.Copy(ls, g)
			want := c.want
			if gi > 0 {
				want = 0
			}
			exp = append(exp, ExpectedSample{Labels: seriesName(labels.FromMap(ls)), Value: want})
		}
		t.PromQLTests = append(t.PromQLTests, PromQLTest{Expr: expr, EvalTime: model.FormatDuration(c.at), ExpSamples: exp})
	}
	return t
}

// shedGroups are the label values of a shedding test's groups: none for an
// SLO without groups, else two (the second stays calm) unless the selector
// fixes every grouping label to one value.
func (b builder) shedGroups(slo model.SLO, base map[string]string) []map[string]string {
	if len(slo.GroupBy) == 0 {
		return []map[string]string{{}}
	}
	var out []map[string]string
	for i := range 2 {
		g := map[string]string{}
		for _, l := range slo.GroupBy {
			g[l] = groupValue(slo, i)
			if v, ok := base[l]; ok {
				g[l] = v
			}
		}
		if !slices.ContainsFunc(out, func(o map[string]string) bool { return maps.Equal(o, g) }) {
			out = append(out, g)
		}
	}
	return out
}

func shedGroupsNote(slo model.SLO, groups []map[string]string) string {
	if len(groups) < 2 {
		return ""
	}
	return fmt.Sprintf(" (%s %s; %s stays calm)", strings.Join(slo.GroupBy, ","), groupValue(slo, 0), groupValue(slo, 1))
}

// recordRule is the labels of an SLO's recording rule by name, with the
// name as __name__.
func (b builder) recordRule(slo model.SLO, name string) (map[string]string, bool) {
	r, ok := b.findRule(slo, func(r rulefmt.Rule) bool { return r.Record == name && r.Labels[model.LabelSLO] == slo.Name })
	if !ok {
		return nil, false
	}
	ls := maps.Clone(r.Labels)
	ls[query.MetricNameLabel] = name
	return ls, true
}

// expanding writes samples in promtool's expanding notation, one segment
// per run of equal increments.
func expanding(vals []float64) string {
	var segs []string
	for i := 0; i < len(vals); {
		j := i + 1
		inc := 0.0
		if j < len(vals) {
			inc = vals[j] - vals[i]
			for j+1 < len(vals) && vals[j+1]-vals[j] == inc {
				j++
			}
		} else {
			j = i
		}
		segs = append(segs, fmt.Sprintf("%s+%sx%d", trim(vals[i]), trim(inc), j-i))
		i = j + 1
	}
	return strings.Join(segs, " ")
}

func lcm(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return max(a, b, 1)
	}
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
