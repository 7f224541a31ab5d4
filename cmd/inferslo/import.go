package main

import (
	"fmt"
	"io"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/importer"
)

type importCmd struct {
	Paths  []string `arg:"" name:"path" help:"Sloth (prometheus/v1, sloth.slok.dev/v1) or Pyrra (pyrra.dev/v1alpha1) spec files or folders."`
	Output string   `short:"o" help:"Folder for the OpenSLO files, one per input file (replaced as a whole, atomically); without it, they are printed."`
}

// Run converts the specs, prints every problem and what changes in meaning
// per SLO, and writes nothing when any problem is an error.
func (c *importCmd) Run(e *env) error {
	sources, err := spec.ReadFiles(c.Paths...)
	if err != nil {
		return err
	}
	res := importer.Import(sources...)
	printProblems(e.stderr, res.Problems)
	if errs := res.Problems.Errors(); len(errs) > 0 {
		fmt.Fprintf(e.stderr, "%d problem(s) found; nothing written\n", len(errs))
		return errReported
	}
	if len(res.Files) == 0 {
		return fmt.Errorf("no Sloth or Pyrra SLO found in %d files", len(sources))
	}
	report := e.stderr
	if c.Output != "" {
		report = e.stdout
	}
	printReports(report, res.Reports)
	if c.Output == "" {
		for i, f := range res.Files {
			if i > 0 {
				fmt.Fprintln(e.stdout, "---")
			}
			if _, err := e.stdout.Write(f.Data); err != nil {
				return err
			}
		}
		return nil
	}
	stage, err := artifact.NewStage(c.Output, "import")
	if err != nil {
		return err
	}
	for _, f := range res.Files {
		if err := stage.Add(artifact.File{Path: f.Name, Data: f.Data}); err != nil {
			stage.Abort()
			return err
		}
	}
	if err := stage.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %d OpenSLO files to %s; compile them with inferslo compile %s -o OUT\n", len(res.Files), c.Output, c.Output)
	return nil
}

func printReports(w io.Writer, reports []importer.Report) {
	for _, r := range reports {
		fmt.Fprintf(w, "%s (%s):\n", r.SLO, r.Source)
		for _, c := range r.Changes {
			fmt.Fprintf(w, "  - %s\n", c)
		}
	}
}
