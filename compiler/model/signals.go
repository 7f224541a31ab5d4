package model

import (
	"math/big"
	"time"
)

// OutageTier names the outage tier of burn alerts (their burn_tier label);
// its severity label is the page tier's.
const OutageTier = "outage"

// OutageErrorRatio is the share of failing requests the outage tier pages
// on: (nearly) all of them.
var OutageErrorRatio = NewDecimal(9, 10)

// OutageWindow is the shortest outage window: 90% of it failing takes
// 1m48s, so the tier pages about two minutes into a total outage.
const OutageWindow = 2 * time.Minute

// OutageMinEvents is the fewest events the outage window must hold: one
// failed request at night is no outage.
const OutageMinEvents = 10

// OutageTierOf is the outage tier of an SLO whose shortest rate window is
// minRate: one window of minRate (four scrapes, the shortest rate() reads)
// but at least OutageWindow, at a burn factor of OutageErrorRatio / budget, rounded down to a tenth
// so that 90% failing requests always reach it. A total outage burns at
// 1 / budget, so the factor is reachable for every target; and since
// 0.9 / budget > 14.4 for every target above 93.75%, a burn the workbook's
// 14.4x page tier is meant for never reaches it. No `for`: 90% of a
// window failing already takes 90% of the window.
func OutageTierOf(objective Decimal, minRate time.Duration) Tier {
	budget := NewDecimal(1, 1).Sub(objective)
	r := new(big.Rat).Quo(OutageErrorRatio.rat(), budget.rat())
	r.Mul(r, big.NewRat(10, 1))
	floor := new(big.Int).Quo(r.Num(), r.Denom())
	return Tier{
		Severity: OutageTier,
		Windows:  []WindowPair{{Long: max(minRate, OutageWindow), Short: max(minRate, OutageWindow), Factor: fromRat(new(big.Rat).SetFrac(floor, big.NewInt(10)))}},
	}
}

// Backlog is the early warning on waiting requests per replica.
type Backlog struct {
	// PerReplica is the mean number of waiting requests per replica above
	// which the alert fires.
	PerReplica Decimal
	// For is how long the backlog must hold.
	For time.Duration
	// Derived tells the threshold came from the capacity facts:
	// BacklogShare × slots × TTFT threshold / mean service time.
	Derived bool
}

// BacklogShare is the share of the queue that alone spends the TTFT
// threshold at which the early warning fires.
var BacklogShare = NewDecimal(3, 4)

// BacklogFor is the default hold of the early warning: none, since an
// overload fills the queue within a scrape and the outage tier pages after
// 90% of its two minutes; any hold spends the warning's lead.
const BacklogFor = 0

// Shedding is the load-shedding signals of a TTFT SLO: each is 1 while the
// TTFT quantile of the objective (p99 for 99%) has stayed above Factor ×
// the threshold for For, else 0.
type Shedding struct {
	Shed, ReduceContext ShedSignal
}

// ShedSignal is one load-shedding signal.
type ShedSignal struct {
	Factor Decimal
	For    time.Duration
}

// DefaultShedding is the seed's policy: reject with 429 when the TTFT
// quantile exceeds twice the threshold for 30s; reduce context when it
// exceeds 200% of it for 10s.
func DefaultShedding() Shedding {
	return Shedding{
		Shed:          ShedSignal{Factor: NewDecimal(2, 1), For: 30 * time.Second},
		ReduceContext: ShedSignal{Factor: NewDecimal(2, 1), For: 10 * time.Second},
	}
}
