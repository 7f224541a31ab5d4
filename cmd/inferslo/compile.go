package main

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/kube"
)

type compileCmd struct {
	Specs  []string `arg:"" name:"spec" help:"Spec files or folders (*.yaml, *.yml, *.json)."`
	Output string   `short:"o" required:"" help:"Output folder; replaced as a whole, atomically."`
	Check  bool     `help:"Write nothing; exit 1 with a diff when the output folder is stale."`
	Tests  bool     `help:"Also write promtool unit tests (prometheus/<service>.test.yaml) for every alert tier."`

	Namespace       string            `help:"Namespace of the generated PrometheusRule objects." placeholder:"NS"`
	RuleLabel       map[string]string `help:"Label of the PrometheusRule objects, repeatable (a Prometheus selects rules by label)." placeholder:"KEY=VALUE"`
	PartialResponse string            `name:"thanos-partial-response" help:"Thanos partial_response_strategy of the ruler groups: abort or warn." enum:",abort,warn" default:""`
}

func (c *compileCmd) options() compiler.Options {
	return compiler.Options{
		Tests: c.Tests,
		Kube:  kube.Options{Namespace: c.Namespace, Labels: c.RuleLabel, PartialResponseStrategy: c.PartialResponse},
		Ruler: kube.RulerOptions{PartialResponseStrategy: c.PartialResponse},
	}
}

func (c *compileCmd) Run(e *env) error {
	res, err := load(e, c.Specs)
	if err != nil {
		return err
	}
	out, err := compiler.Compile(res.Set, c.options())
	if err != nil {
		return err
	}
	for _, w := range out.Warnings {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	files := out.Files
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
