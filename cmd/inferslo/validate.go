package main

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler"
)

type validateCmd struct {
	Specs     []string      `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs  catalogFlag   `embed:""`
	Metrics   metricsFlag   `embed:""`
	Templates templatesFlag `embed:""`
	Tests     bool          `help:"Also build and check the promtool unit tests that compile --tests writes."`
}

// Run checks what compile checks (with --tests, what compile --tests
// checks), artifacts included, and writes nothing.
func (c *validateCmd) Run(e *env) error {
	text, err := c.Templates.load()
	if err != nil {
		return err
	}
	res, err := check(e, c.Specs, c.Catalogs, c.Metrics, compiler.Options{Tests: c.Tests, Text: text}, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%d spec files, %d SLOs: ok\n", len(res.Files), len(res.Set.SLOs))
	return nil
}
