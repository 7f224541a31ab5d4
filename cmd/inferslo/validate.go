package main

import "fmt"

type validateCmd struct {
	Specs    []string    `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs catalogFlag `embed:""`
}

func (c *validateCmd) Run(e *env) error {
	res, err := load(e, c.Specs, c.Catalogs)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%d spec files, %d SLOs: ok\n", len(res.Files), len(res.Set.SLOs))
	return nil
}
