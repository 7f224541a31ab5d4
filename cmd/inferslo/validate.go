package main

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler"
)

type validateCmd struct {
	Specs     []string      `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs  catalogFlag   `embed:""`
	Templates templatesFlag `embed:""`
}

// Run checks what compile checks, artifacts included, and writes nothing.
func (c *validateCmd) Run(e *env) error {
	text, err := c.Templates.load()
	if err != nil {
		return err
	}
	res, err := check(e, c.Specs, c.Catalogs, compiler.Options{Tests: true, Text: text}, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%d spec files, %d SLOs: ok\n", len(res.Files), len(res.Set.SLOs))
	return nil
}
