package main

import (
	"fmt"

	"github.com/inferslo/inferslo/spec"
)

type validateCmd struct {
	Specs      []string      `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs   catalogFlag   `embed:""`
	Metrics    metricsFlag   `embed:""`
	Templates  templatesFlag `embed:""`
	Tests      bool          `help:"Also build and check the promtool unit tests that compile --tests writes."`
	Format     formatFlag    `embed:""`
	shapeFlags `embed:""`
}

// validateJSON is validate's --format json document
// (docs/schemas/validate.schema.json).
type validateJSON struct {
	*report
	Files int `json:"files"`
	SLOs  int `json:"slos"`
}

func (c *validateCmd) Run(e *env) error {
	if c.Format.json() {
		e.report = newReport()
		res, err := c.validate(e)
		e.report.finish(err)
		return writeJSON(e, validateJSON{report: e.report, Files: len(res.Files), SLOs: len(res.Set.SLOs)}, err)
	}
	res, err := c.validate(e)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%d spec files, %d SLOs: ok\n", len(res.Files), len(res.Set.SLOs))
	return nil
}

// validate checks what compile checks (with --tests, what compile --tests
// checks), artifacts included, and writes nothing.
func (c *validateCmd) validate(e *env) (spec.Result, error) {
	text, err := c.Templates.load()
	if err != nil {
		return spec.Result{}, err
	}
	opts, err := c.shapeFlags.options(c.Tests, text)
	if err != nil {
		return spec.Result{}, err
	}
	return check(e, c.Specs, c.Catalogs, c.Metrics, c.shapeFlags, opts, nil)
}
