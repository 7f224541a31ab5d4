package main

import (
	"github.com/inferslo/inferslo/spec"
)

type exportCmd struct {
	Specs      []string `arg:"" name:"spec" help:"Spec files or folders."`
	Kubernetes bool     `help:"Print Kubernetes objects of the openslo.com/v1 kinds, one YAML document each, for inferslo-controller (kubectl apply -f -)."`
	Namespace  string   `help:"Namespace of the objects --kubernetes prints; empty leaves it to kubectl's context." placeholder:"NS"`
}

func (c *exportCmd) Run(e *env) error {
	out, problems, err := spec.Export(c.Specs...)
	if c.Kubernetes {
		out, problems, err = spec.ExportCluster(c.Namespace, c.Specs...)
	}
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
