package main

import (
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/backtest"
)

type reportCmd struct {
	History history `embed:""`
	Period  string  `required:"" help:"The calendar period reported, in UTC: a month (2026-10) or a quarter (2026-Q4); one still running ends now." placeholder:"PERIOD"`
}

// Run reports a period with backtest's own replay: per SLO group the
// period's SLI, budget spent, worst hours and the alert intervals.
func (c *reportCmd) Run(e *env) error {
	from, to, err := backtest.ParsePeriod(c.Period, time.Now())
	if err != nil {
		return fmt.Errorf("--period: %w", err)
	}
	return c.History.replay(e, "inferslo report", from, to)
}
