package main

import (
	"context"
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/backtest"
	"github.com/inferslo/inferslo/compiler/httpconfig"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

type backtestCmd struct {
	History history `embed:""`
	From    string  `required:"" help:"Start of the range: RFC 3339, or a duration back from now (-30d)." placeholder:"TIME"`
	To      string  `default:"now" help:"End of the range: RFC 3339, now, or a duration back from now (-1d)." placeholder:"TIME"`
}

// history is what reading a range of history takes: the specs, the
// server, and what to print; backtest names the range, report a period.
type history struct {
	Specs      []string      `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs   catalogFlag   `embed:""`
	Templates  templatesFlag `embed:""`
	Prometheus string        `required:"" help:"Base URL of the Prometheus-compatible HTTP API holding the history (Prometheus, Thanos, Mimir, VictoriaMetrics)." placeholder:"URL"`
	Read       string        `default:"server" enum:"server,raw" help:"Where the rules' expressions over raw series evaluate: server (the server answers each SLO's rates at the rules' interval, falling back to raw reads only for what cannot run there) or raw (every raw series is read at --step and evaluated here, for a server that stores but cannot evaluate)."`
	Step       time.Duration `help:"Resolution raw series are read at (with --read raw, or where an expression cannot run on the server); default the SLOs' scrape interval." placeholder:"DUR"`
	Rules      string        `help:"Replay the rule files in this folder (a compile output, possibly edited) instead of compiling the specs afresh." placeholder:"DIR"`
	JSON       bool          `help:"Print the alerts and SLO figures as JSON."`
	Output     string        `short:"o" help:"Also write an HTML report (index.html: budget spent, burn rates against the alert tiers, fired alerts) to this folder; replaced as a whole, atomically." placeholder:"DIR"`
	Timeout    time.Duration `default:"2m" help:"Time each request to the server may take."`
	HTTPConfig string        `name:"http-config" help:"Prometheus' HTTP client configuration for the server: authorization (a bearer token or its file), basic_auth, tls_config (a CA), oauth2, proxy_url, http_headers (Mimir's and Cortex's X-Scope-OrgID tenant). Credentials are never printed." placeholder:"FILE"`
	MaxSamples int64         `default:"200000000" help:"Most samples read in all (about 2 bytes of memory each once stored)."`
	Progress   progressFlag  `embed:""`
}

func (c *backtestCmd) Run(e *env) error {
	now := time.Now()
	from, err := backtest.ParseTime(c.From, now)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	to, err := backtest.ParseTime(c.To, now)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	return c.History.replay(e, "inferslo backtest", func(model.Set) (time.Time, time.Time, error) { return from, to, nil })
}

// replay replays the alerts over the range span gives for the specs and
// prints what they said.
func (c *history) replay(e *env, name string, span func(model.Set) (time.Time, time.Time, error)) error {
	text, err := c.Templates.load()
	if err != nil {
		return err
	}
	if c.Step < 0 || c.Timeout <= 0 || c.MaxSamples <= 0 {
		return fmt.Errorf("--step, --timeout and --max-samples must be positive")
	}
	client, err := httpconfig.Client(c.HTTPConfig, c.Timeout)
	if err != nil {
		return err
	}
	res, err := load(e, c.Specs, c.Catalogs)
	if err != nil {
		return err
	}
	from, to, err := span(res.Set)
	if err != nil {
		return err
	}
	var files artifact.Set
	if c.Rules != "" {
		if files, err = prom.ReadRuleFiles(c.Rules); err != nil {
			return fmt.Errorf("read rules: %w", err)
		}
	}
	// The output folder is checked, and locked, before the run: a folder
	// that cannot be written fails now, not after reading a month.
	var stage *artifact.Stage
	if c.Output != "" {
		if stage, err = artifact.NewStage(c.Output, "backtest"); err != nil {
			return err
		}
		defer func() {
			if stage != nil {
				stage.Abort()
			}
		}()
	}
	var p *progress
	r, err := backtest.Run(context.Background(), res.Set, backtest.Options{
		Source:  backtest.Source{URL: c.Prometheus, Step: c.Step, Timeout: c.Timeout, MaxSamples: c.MaxSamples, Client: client},
		From:    from,
		To:      to,
		Text:    text,
		Rules:   files,
		Scratch: e.scratch,
		Read:    backtest.Read(c.Read),
		Progress: func(total int) func() {
			p = c.Progress.start(e, name, "steps (requests, replayed days)", total)
			return p.step
		},
	})
	p.end()
	if err != nil {
		return err
	}
	if c.Output != "" {
		page, err := r.HTML(res.Set, c.Prometheus)
		if err != nil {
			return err
		}
		if err := stage.Add(artifact.File{Path: "index.html", Data: page}); err != nil {
			return err
		}
		err = stage.Commit()
		stage = nil
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "wrote %s/index.html: %d SLO groups, %d alert intervals\n", c.Output, len(r.SLOs), len(r.Alerts))
	}
	return printResult(e, c.JSON, r)
}
