package promtest

import (
	"fmt"
	"math"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
)

// goodputTests check the goodput bounds of each ungrouped TTFT and TPOT
// pair: 1/16 of requests slow to start and 1/8 slow to stream put goodput
// between 1 − 3/16 and 1 − 1/8.
func (b builder) goodputTests() ([]Test, error) {
	const perScrape, ttftBad, tpotBad = 64, 4, 8
	var out []Test
	for _, p := range model.GoodputPairs(b.slos) {
		if len(p.TTFT.GroupBy) > 0 {
			continue
		}
		scrape := p.TTFT.Scrape()
		if s := p.TPOT.Scrape(); s < scrape {
			scrape = s
		}
		evalAt := b.evalTime()
		steps := int((evalAt+b.eval)/scrape) + 1
		t := Test{Name: fmt.Sprintf("%s and %s: goodput lies between 1 - (1/16 + 1/8) and 1 - 1/8", p.TTFT.Name, p.TPOT.Name), Interval: model.FormatDuration(scrape)}
		seen := map[string]string{}
		for _, side := range []struct {
			slo model.SLO
			bad float64
		}{{p.TTFT, ttftBad}, {p.TPOT, tpotBad}} {
			counters, err := synth.Counters(side.slo)
			if err != nil {
				return nil, fmt.Errorf("slo %s: %w", side.slo.Name, err)
			}
			for _, in := range ungrouped(counters, perScrape, side.bad) {
				name, v := seriesName(in.Counter.Labels), values(in, steps)
				if !in.Counter.Native() {
					// Whole requests per scrape: the spread of good
					// latencies over buckets leaves 59.99999999999999.
					v = fmt.Sprintf("0+%sx%d", trim(math.Round(in.Counter.Value(in.N, in.K))), steps)
				}
				if prev, ok := seen[name]; ok {
					if prev != v {
						return nil, fmt.Errorf("slos %s and %s read %s differently", p.TTFT.Name, p.TPOT.Name, name)
					}
					continue
				}
				seen[name] = v
				t.InputSeries = append(t.InputSeries, Series{Series: name, Values: v})
			}
		}
		w := p.TTFT.BaseWindow()
		pair := model.SLO{Name: p.Name()}
		for _, e := range []struct {
			name  string
			value float64
		}{{model.GoodputLower, 1 - (ttftBad+tpotBad)/float64(perScrape)}, {model.GoodputUpper, 1 - tpotBad/float64(perScrape)}} {
			labels := fmt.Sprintf("{%s=%q, %s=%q, %s=%q, %s=%q", model.LabelService, p.TTFT.Service.Name,
				model.LabelSLI, model.SLIGoodput, model.LabelSLO, p.Name(), model.LabelWindow, model.FormatDuration(w))
			if p.TTFT.SLOTier != "" {
				labels += fmt.Sprintf(", %s=%q", model.LabelSLOTier, p.TTFT.SLOTier)
			}
			// Rates carry rounding of a few units in the last place: the
			// test reads 1 while the bound is within 1e-9 of the value.
			expr := fmt.Sprintf("abs(%s - %s) < bool 1e-9", model.Selector(e.name, pair, w), trim(e.value))
			t.PromQLTests = append(t.PromQLTests, PromQLTest{Expr: expr, EvalTime: model.FormatDuration(evalAt),
				ExpSamples: []ExpectedSample{{Labels: labels + "}", Value: 1}}})
		}
		out = append(out, t)
	}
	return out, nil
}
