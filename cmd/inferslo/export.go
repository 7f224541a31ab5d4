package main

import (
	"github.com/inferslo/inferslo/spec"
)

type exportCmd struct {
	Specs []string `arg:"" name:"spec" help:"Spec files or folders."`
}

func (c *exportCmd) Run(e *env) error {
	out, problems, err := spec.Export(c.Specs...)
	printProblems(e.stderr, problems)
	if err != nil {
		return err
	}
	if len(problems.Errors()) > 0 {
		return errReported
	}
	_, err = e.stdout.Write(out)
	return err
}
