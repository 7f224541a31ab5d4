package main

import (
	"fmt"

	"github.com/inferslo/inferslo/spec"
)

// load reads specs and prints every problem with its snippet. It returns
// errReported when any problem is an error.
func load(e *env, paths []string) (spec.Result, error) {
	res, err := spec.Load(paths...)
	if err != nil {
		return res, err
	}
	for _, p := range res.Problems {
		fmt.Fprintln(e.stderr, p.String())
		if s := p.Snippet(); s != "" {
			fmt.Fprint(e.stderr, s)
		}
	}
	if errs := res.Problems.Errors(); len(errs) > 0 {
		fmt.Fprintf(e.stderr, "%d problem(s) found\n", len(errs))
		return res, errReported
	}
	return res, nil
}
