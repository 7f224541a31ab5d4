package rules

import (
	"fmt"

	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/compiler/model"
)

// goodputRules records goodput's bounds for each pair of a service's TTFT
// and TPOT SLOs (see model.GoodputPairs), by the name of the TPOT SLO whose
// group holds them. With g₁ and g₂ the two SLOs' shares of good requests
// over a window (1 − their error ratios), the share within both thresholds
// lies between the Fréchet bounds
//
//	lower = max(0, g₁ + g₂ − 1) = max(0, 1 − (e₁ + e₂))
//	upper = min(g₁, g₂)         = 1 − max(e₁, e₂)
//
// The joint share itself is not observable: the histograms count how many
// requests missed each threshold, never which. The rules read the two
// error ratios the SLOs' groups record, so they follow them by at most one
// evaluation; a window without traffic leaves both bounds absent.
func goodputRules(slos []model.SLO) map[string][]rulefmt.Rule {
	out := map[string][]rulefmt.Rule{}
	for _, p := range model.GoodputPairs(slos) {
		for _, w := range p.Windows() {
			ttft := fmt.Sprintf("sum without (%s, %s) (%s)", model.LabelSLO, model.LabelSLI, model.Selector(model.ErrorRatio, p.TTFT, w))
			tpot := fmt.Sprintf("sum without (%s, %s) (%s)", model.LabelSLO, model.LabelSLI, model.Selector(model.ErrorRatio, p.TPOT, w))
			labels := map[string]string{
				model.LabelSLO:     p.Name(),
				model.LabelService: p.TTFT.Service.Name,
				model.LabelSLI:     model.SLIGoodput,
				model.LabelWindow:  model.FormatDuration(w),
			}
			if p.TTFT.SLOTier != "" {
				labels[model.LabelSLOTier] = p.TTFT.SLOTier
			}
			out[p.TPOT.Name] = append(out[p.TPOT.Name],
				rulefmt.Rule{Record: model.GoodputLower, Expr: fmt.Sprintf("clamp_min(1 - (%s + %s), 0)", ttft, tpot), Labels: labels},
				// One side of the or holds for each group: the larger error
				// ratio, so the upper bound is absent while either is.
				rulefmt.Rule{Record: model.GoodputUpper, Expr: fmt.Sprintf("1 - (%s >= %s or %s > %s)", ttft, tpot, tpot, ttft), Labels: labels})
		}
	}
	return out
}
