package main

import (
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/backtest"
	"github.com/inferslo/inferslo/compiler/model"
)

type reportCmd struct {
	History history `embed:""`
	Period  string  `required:"" help:"The calendar period reported: a month (2026-10) or a quarter (2026-Q4), from local midnight in the time zone of the specs' calendar windows (UTC without one); one still running ends now." placeholder:"PERIOD"`
}

// Run reports a period with backtest's own replay: per SLO group the
// period's SLI, budget spent, worst hours and the alert intervals.
func (c *reportCmd) Run(e *env) error {
	return c.History.replay(e, "inferslo report", func(set model.Set) (time.Time, time.Time, error) {
		offset, err := backtest.PeriodOffset(set)
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("--period: %w", err)
		}
		from, to, err := backtest.ParsePeriod(c.Period, time.Now(), offset)
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("--period: %w", err)
		}
		return from, to, nil
	})
}
