package model

import (
	"fmt"
	"math/big"
	"time"
)

// The alert tiers of burn alerts, as their severity and burn_tier labels
// name them (the severities a spec may rename per tier).
const (
	PageTier   = "page"
	TicketTier = "ticket"
)

// DefaultScrapeInterval is the scrape interval of an SLO whose spec names
// none: Prometheus' own default is 1m, but the engines' Helm charts and
// ServiceMonitors scrape every 30s.
const DefaultScrapeInterval = 30 * time.Second

// Scrape is the SLO's scrape interval, DefaultScrapeInterval when unknown.
func (s SLO) Scrape() time.Duration {
	if s.ScrapeInterval <= 0 {
		return DefaultScrapeInterval
	}
	return s.ScrapeInterval
}

// workbookWindow is the SLO window the Google SRE workbook's alert table is
// defined for.
const workbookWindow = 30 * 24 * time.Hour

// workbookPairs is the workbook's multi-window, multi-burn-rate table for a
// 30d SLO: page on 2% of the budget spent in 1h or 5% in 6h, ticket on 10%
// in 1d or 10% in 3d; the short window of each pair is 1/12 of the long one.
var workbookPairs = []workbookPair{
	{PageTier, time.Hour, NewDecimal(144, 10)},
	{PageTier, 6 * time.Hour, NewDecimal(6, 1)},
	{TicketTier, 24 * time.Hour, NewDecimal(3, 1)},
	{TicketTier, 3 * 24 * time.Hour, NewDecimal(1, 1)},
}

type workbookPair struct {
	severity string
	long     time.Duration
	factor   Decimal
}

// Severities are the alert tiers in order.
var Severities = []string{PageTier, TicketTier}

// TierSeverities are the alert tiers an SLO tier gets by default: a batch
// SLO raises tickets only, since a job waits on it, not a person.
func TierSeverities(sloTier string) []string {
	if sloTier == SLOTierBatch {
		return []string{TicketTier}
	}
	return Severities
}

// WorkbookTiersOf scales the workbook table of the given severities to an
// SLO window; a severity left out cannot fail on its windows. Each pair
// keeps its burn-rate factor and its share of the budget, so its windows
// scale by window/30d exactly (28d: 1h becomes 56m, 5m becomes 4m40s).
// Short windows are raised to minRate, the shortest range rate() can use
// (four scrapes); a long window below minRate is an error. `for` defaults
// to a thirtieth of the tier's first long window, at least one evaluation
// interval.
func WorkbookTiersOf(severities []string, window, minRate, evaluation time.Duration) ([]Tier, error) {
	var tiers []Tier
	for _, sev := range severities {
		t := Tier{Severity: sev}
		for _, p := range workbookPairs {
			if p.severity != sev {
				continue
			}
			long := scale(p.long, window)
			if long < minRate {
				return nil, fmt.Errorf("the %s tier's %s window (%s scaled to a %s SLO) is shorter than the shortest rate window %s (four scrape intervals); use a longer SLO window, a shorter scrape interval, or disable the %s tier",
					sev, FormatDuration(p.long), FormatDuration(long), FormatDuration(window), FormatDuration(minRate), sev)
			}
			short := max(long/12, minRate)
			t.Windows = append(t.Windows, WindowPair{Long: long, Short: short, Factor: p.factor})
		}
		t.For = DefaultFor(t.Windows[0].Long, evaluation)
		tiers = append(tiers, t)
	}
	return tiers, nil
}

// DefaultFor is the `for` of a tier whose fastest pair has the given long
// window: a thirtieth of it (2m for 1h), at least one evaluation interval.
func DefaultFor(long, evaluation time.Duration) time.Duration {
	return max((long / 30).Truncate(time.Second), evaluation)
}

// scale multiplies a workbook window by window/30d exactly, to the second.
func scale(d, window time.Duration) time.Duration {
	return time.Duration(int64(d) / int64(time.Second) * int64(window/time.Second) / int64(workbookWindow/time.Second) * int64(time.Second))
}

// UnreachableTarget tells why a pair can never fire: a factor × budget of 1
// or more needs an error ratio above 100%. It names the targets that work.
func UnreachableTarget(p WindowPair, objective Decimal) error {
	budget := NewDecimal(1, 1).Sub(objective)
	if p.Factor.Mul(budget).Cmp(NewDecimal(1, 1)) < 0 {
		return nil
	}
	// factor × (1 - t) < 1  <=>  t > 1 - 1/factor
	min := NewDecimal(1, 1).Sub(NewDecimal(1, 1).Quo(p.Factor))
	return fmt.Errorf("a %sx burn over %s can never happen with target %s: the error ratio would have to exceed %s; targets above %s make it reachable",
		p.Factor, FormatDuration(p.Long), objective.Percent(), p.Factor.Mul(budget).Percent(), roundPercent(min))
}

// roundPercent prints a ratio as a percentage rounded down to 0.01%.
func roundPercent(d Decimal) string {
	r := d.Mul(NewDecimal(10000, 1)).rat()
	floor := new(big.Int).Div(r.Num(), r.Denom())
	return fromRat(new(big.Rat).SetFrac(floor, big.NewInt(100))).String() + "%"
}
