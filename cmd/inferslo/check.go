package main

import (
	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/spec"
)

// check runs every check of a compilation, in one pass: the specs are
// loaded and every backend builds and validates its artifacts, which go to
// add one at a time (nil: they are only checked). validate and compile both
// call it, so they report the same problems.
func check(e *env, specs []string, catalogs catalogFlag, metrics metricsFlag, opts compiler.Options, add func(artifact.File) error) (spec.Result, error) {
	res, err := loadScraped(e, specs, catalogs, metrics)
	if err != nil {
		return res, err
	}
	if add == nil {
		var c artifact.Checker
		add = c.Add
	}
	return res, compiler.CompileTo(res.Set, opts, add)
}
