package importer

import (
	"fmt"
	"time"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

// minRate is the shortest window inferslo's rules read at the default
// scrape interval (four scrapes), and so the shortest short window.
const minRate = 4 * spec.DefaultScrapeInterval

// tierPolicies turns the source tool's tiers into inline alert policies.
// A pair that can never fire at the objective (factor × budget ≥ 1) is
// left out, as inferslo refuses it; the source tool writes it anyway.
func tierPolicies(name string, tiers []model.Tier, objective float64) ([]v1.SLOAlertPolicy, []string, error) {
	var out []v1.SLOAlertPolicy
	var changes []string
	target := model.DecimalFromFloat(objective)
	for _, t := range tiers {
		var pairs []model.WindowPair
		for _, p := range t.Windows {
			if err := model.UnreachableTarget(p, target); err != nil {
				changes = append(changes, fmt.Sprintf("the %s pair %sx over %s is left out: %v", t.Severity, p.Factor, model.FormatDuration(p.Long), err))
				continue
			}
			if p.Short < minRate {
				changes = append(changes, fmt.Sprintf("the short window %s of the %s pair %sx over %s is raised to %s (four 30s scrapes)", model.FormatDuration(p.Short), t.Severity, p.Factor, model.FormatDuration(p.Long), model.FormatDuration(minRate)))
				p.Short = minRate
			}
			pairs = append(pairs, p)
		}
		if len(pairs) == 0 {
			continue
		}
		pols, err := burnPolicies(name, t.Severity, t.For, pairs)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, pols...)
	}
	return out, changes, nil
}

// wholeMinutes is d rounded up to whole minutes, the unit of OpenSLO's
// alertAfter, and at least one evaluation interval.
func wholeMinutes(d time.Duration) time.Duration {
	return max((d+time.Minute-1)/time.Minute*time.Minute, spec.DefaultEvaluation)
}
