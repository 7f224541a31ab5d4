package main

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/spec"
)

// check runs every check of a compilation, in one pass: the specs are
// loaded and every backend builds and validates its artifacts in memory.
// validate and compile both call it, so they report the same problems.
func check(e *env, specs []string, catalogs catalogFlag, opts compiler.Options) (spec.Result, compiler.Output, error) {
	res, err := load(e, specs, catalogs)
	if err != nil {
		return res, compiler.Output{}, err
	}
	out, err := compiler.Compile(res.Set, opts)
	if err != nil {
		return res, compiler.Output{}, err
	}
	for _, w := range out.Warnings {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	return res, out, nil
}
