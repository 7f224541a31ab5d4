package main

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler"
)

type compileCmd struct {
	Specs  []string `arg:"" name:"spec" help:"Spec files or folders (*.yaml, *.yml, *.json)."`
	Output string   `short:"o" required:"" help:"Output folder; replaced as a whole, atomically."`
	Check  bool     `help:"Write nothing; exit 1 with a diff when the output folder is stale."`
}

func (c *compileCmd) Run(e *env) error {
	res, err := load(e, c.Specs)
	if err != nil {
		return err
	}
	files, err := compiler.Compile(res.Set)
	if err != nil {
		return err
	}
	if c.Check {
		diff, err := files.Diff(c.Output)
		if err != nil {
			return err
		}
		if len(diff) > 0 {
			e.stdout.Write(diff)
			fmt.Fprintf(e.stderr, "%s is stale: run `inferslo compile %s -o %s` and commit the result\n", c.Output, joinArgs(c.Specs), c.Output)
			return errReported
		}
		fmt.Fprintf(e.stderr, "%s is up to date (%d files)\n", c.Output, len(files))
		return nil
	}
	if err := files.Write(c.Output); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %d files for %d SLOs to %s\n", len(files), len(res.Set.SLOs), c.Output)
	return nil
}

func joinArgs(a []string) string {
	s := ""
	for i, x := range a {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}
