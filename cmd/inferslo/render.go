package main

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/review"
	"github.com/inferslo/inferslo/compiler/review/timeline"
)

type renderCmd struct {
	Specs     []string      `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs  catalogFlag   `embed:""`
	Templates templatesFlag `embed:""`
	Budget    budgetFlag    `embed:""`
	Output    string        `short:"o" required:"" help:"Output folder for index.html; replaced as a whole, atomically."`
	Progress  progressFlag  `embed:""`
}

func (c *renderCmd) Run(e *env) error {
	text, res, err := loadSimulated(e, c.Specs, c.Catalogs, c.Templates, c.Budget)
	if err != nil {
		return err
	}
	p := c.Progress.start(e, "inferslo render", "services replayed", len(res.Set.Services()))
	rv, err := review.Build(res.Set, review.Options{Text: text, Timeline: timeline.TimelineOptions{Done: p.step, Scratch: e.scratch}})
	p.end()
	if err != nil {
		return err
	}
	for _, s := range rv.Skipped {
		fmt.Fprintln(e.stderr, "not simulated:", s)
	}
	if err := (artifact.Set{{Path: "index.html", Data: rv.Page}}).Write(c.Output, "render"); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s/index.html: %d SLOs, %d panel queries over %s of simulated traffic\n",
		c.Output, len(res.Set.SLOs), rv.Queries, rv.Replayed)
	return nil
}
