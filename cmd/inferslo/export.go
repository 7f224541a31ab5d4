package main

import (
	"fmt"

	"github.com/inferslo/inferslo/spec"
)

type exportCmd struct {
	Specs []string `arg:"" name:"spec" help:"Spec files or folders."`
}

func (c *exportCmd) Run(e *env) error {
	out, problems, err := spec.Export(c.Specs...)
	for _, p := range problems {
		fmt.Fprintln(e.stderr, p.String())
		if s := p.Snippet(); s != "" {
			fmt.Fprint(e.stderr, s)
		}
	}
	if err != nil {
		return err
	}
	if len(problems.Errors()) > 0 {
		return errReported
	}
	_, err = e.stdout.Write(out)
	return err
}
