package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/simulate"
	"github.com/inferslo/inferslo/compiler/simulate/cost"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
)

type testCmd struct {
	Specs     []string      `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs  catalogFlag   `embed:""`
	Templates templatesFlag `embed:""`
	Budget    budgetFlag    `embed:""`
	Rules     string        `help:"Test the rule files in this folder (a compile output, possibly edited) instead of compiling the specs afresh." placeholder:"DIR"`
	JSON      bool          `help:"Print the results as JSON."`
	Cost      bool          `help:"Measure what the rules cost Prometheus per evaluation, next to naive rules that compute every window from raw series."`
	Pods      int           `help:"Pods per model for --cost." default:"200"`
	Models    int           `help:"Models for --cost." default:"4"`
	Strict    bool          `help:"Exit 1 when some SLO could not be proven by simulation (a raw-ratio SLI)."`
	Progress  progressFlag  `embed:""`
}

func (c *testCmd) Run(e *env) error {
	text, res, err := loadSimulated(e, c.Specs, c.Catalogs, c.Templates, c.Budget)
	if err != nil {
		return err
	}
	// The simulator allocates in bursts; collecting less often halves its
	// time. Only a few replays are in flight (one per core), so a soft limit
	// per core keeps that headroom from growing with the number of SLOs.
	debug.SetGCPercent(400)
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(simulate.MemoryLimit(runtime.GOMAXPROCS(0)))
	}
	if c.Cost {
		return c.cost(e, res.Set)
	}
	var files artifact.Set
	if c.Rules != "" {
		if files, err = prom.ReadRuleFiles(c.Rules); err != nil {
			return fmt.Errorf("read rules: %w", err)
		}
		if len(files) == 0 {
			return fmt.Errorf("no *.rules.yaml files below %s", c.Rules)
		}
	}
	p := c.Progress.start(e, "inferslo test", "SLOs done", len(res.Set.SLOs))
	var r simulate.Result
	if files != nil {
		r, err = simulate.RunFiles(res.Set, files, simulate.Options{Done: p.step, Scratch: e.scratch})
	} else {
		r, err = simulate.Run(res.Set, simulate.Options{Text: text, Done: p.step, Scratch: e.scratch})
	}
	p.end()
	if err != nil {
		return err
	}
	if err := printResult(e, c.JSON, r); err != nil {
		return err
	}
	if failed := r.Failures(); len(failed) > 0 {
		if c.JSON {
			fmt.Fprintln(e.stderr, r.Error())
		} else {
			fmt.Fprintf(e.stderr, "%d simulation checks failed (FAIL lines above)\n", len(failed))
		}
		return errReported
	}
	if unproven := r.Unproven(); c.Strict && len(unproven) > 0 {
		fmt.Fprintf(e.stderr, "--strict: %d SLOs not proven by simulation (NOT PROVEN lines above)\n", len(unproven))
		return errReported
	}
	return nil
}

func (c *testCmd) cost(e *env, set model.Set) error {
	report, err := cost.Measure(set, cost.Options{Shape: synth.Shape{Pods: c.Pods, Models: c.Models}, Scratch: e.scratch})
	if err != nil {
		return err
	}
	return printResult(e, c.JSON, report)
}
