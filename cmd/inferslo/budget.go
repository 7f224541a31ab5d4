package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/inferslo/inferslo/compiler/backtest"
	"github.com/inferslo/inferslo/compiler/budget"
	"github.com/inferslo/inferslo/compiler/httpconfig"
)

type budgetCmd struct {
	Specs      []string      `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs   catalogFlag   `embed:""`
	Prometheus string        `required:"" help:"Base URL of the Prometheus-compatible HTTP API the compiled rules run in (Prometheus, Thanos, Mimir, VictoriaMetrics)." placeholder:"URL"`
	At         string        `default:"now" help:"When to read the budget: RFC 3339, now, or a duration back from now (-1h)." placeholder:"TIME"`
	FailBelow  *float64      `name:"fail-below" help:"Exit 1 when any SLO or group has less than this percentage of its error budget left (0 to 100; a release gate)." placeholder:"PCT"`
	JSON       bool          `help:"Print the budget left of every SLO and group as JSON."`
	Timeout    time.Duration `default:"30s" help:"Time each request to the server may take."`
	HTTPConfig string        `name:"http-config" help:"Prometheus' HTTP client configuration for the server: authorization (a bearer token or its file), basic_auth, tls_config (a CA), oauth2, proxy_url, http_headers (Mimir's and Cortex's X-Scope-OrgID tenant). Credentials are never printed." placeholder:"FILE"`
}

// exitError ends a run with its own exit code, the error printed first.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// Run exits 2 when the budget cannot be read, 1 when a group is below the
// threshold, and 0 otherwise: a pipeline tells a spent budget from a
// broken gate.
func (c *budgetCmd) Run(e *env) error {
	r, err := c.read(e)
	if err != nil {
		return exitError{code: exitUnknown, err: err}
	}
	if err := printResult(e, c.JSON, r); err != nil {
		return exitError{code: exitUnknown, err: err}
	}
	if n := r.Below(); n > 0 {
		fmt.Fprintf(e.stderr, "inferslo: %d of %d SLO groups have less than %s of their error budget left\n", n, len(r.Groups), budget.Percent(*r.FailBelow))
		return errReported
	}
	return nil
}

func (c *budgetCmd) read(e *env) (budget.Report, error) {
	at, err := backtest.ParseTime(c.At, time.Now())
	if err != nil {
		return budget.Report{}, fmt.Errorf("--at: %w", err)
	}
	var below *float64
	if c.FailBelow != nil {
		p := *c.FailBelow
		if math.IsNaN(p) || p < 0 || p > 100 {
			return budget.Report{}, fmt.Errorf("--fail-below %v: valid is a percentage from 0 to 100", p)
		}
		share := p / 100
		below = &share
	}
	if c.Timeout <= 0 {
		return budget.Report{}, fmt.Errorf("--timeout must be positive")
	}
	client, err := httpconfig.Client(c.HTTPConfig, c.Timeout)
	if err != nil {
		return budget.Report{}, err
	}
	res, err := load(e, c.Specs, c.Catalogs)
	if err != nil {
		return budget.Report{}, err
	}
	return budget.Read(context.Background(), res.Set, backtest.Source{URL: c.Prometheus, Timeout: c.Timeout, Client: client}, at, below)
}
