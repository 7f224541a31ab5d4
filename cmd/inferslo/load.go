package main

import (
	"fmt"
	"strings"

	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/templates"
)

// catalogFlag adds engine catalog files to the built-in catalog.
type catalogFlag struct {
	Catalog []string `help:"Engine catalog file declaring your own engines' metrics (the format of spec/engine/catalog.yaml), repeatable." type:"existingfile" placeholder:"FILE"`
}

// templatesFlag replaces the built-in wording of alert annotations.
type templatesFlag struct {
	Templates string `help:"Folder of templates (alert-burn-summary.tmpl, ...) that replace the built-in wording of alert annotations; see docs/templates.md." placeholder:"DIR"`
}

// load reads and validates the templates, the built-in ones for those the
// folder does not replace.
func (f templatesFlag) load() (*templates.Text, error) { return templates.Load(f.Templates) }

// load reads specs, runs the command's further checks on each SLO, and
// prints every problem with its snippet. It returns errReported when any
// problem is an error.
func load(e *env, paths []string, catalogs catalogFlag, checks ...spec.Check) (spec.Result, error) {
	cat, err := spec.Catalog(catalogs.Catalog...)
	if err != nil {
		return spec.Result{}, err
	}
	res, err := spec.LoadChecked(cat, checks, paths...)
	if err != nil {
		return res, err
	}
	if e.report != nil {
		e.report.addProblems(res.Problems)
	} else {
		for _, p := range res.Problems {
			fmt.Fprintln(e.stderr, p.String())
			if s := p.Snippet(); s != "" {
				fmt.Fprint(e.stderr, s)
			}
		}
	}
	if errs := res.Problems.Errors(); len(errs) > 0 {
		if e.report == nil {
			fmt.Fprintf(e.stderr, "%d problem(s) found\n", len(errs))
		}
		return res, errReported
	}
	// Writing zero files would replace existing rules with nothing.
	if len(res.Set.SLOs) == 0 {
		return res, fmt.Errorf("no SLO found in %s (%d spec files read); an output needs at least one objective", strings.Join(paths, " "), len(res.Files))
	}
	return res, nil
}
