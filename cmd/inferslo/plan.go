package main

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler/capacity"
)

type planCmd struct {
	Specs    []string    `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs catalogFlag `embed:""`
}

func (c *planCmd) Run(e *env) error {
	res, err := load(e, c.Specs, c.Catalogs)
	if err != nil {
		return err
	}
	plans, err := capacity.Plans(res.Set)
	if err != nil {
		return err
	}
	if len(plans) == 0 {
		fmt.Fprintln(e.stderr, "no service has capacity facts (spec.autoscaling.capacity: peakRPS and meanServiceTime)")
		return errReported
	}
	for i, p := range plans {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprint(e.stdout, p.Explain())
	}
	return nil
}
