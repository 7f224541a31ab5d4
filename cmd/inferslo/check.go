package main

import (
	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/spec"
)

// check runs every check of a compilation, in one pass: the specs are
// loaded and every backend builds and validates its artifacts, which go to
// add one at a time (nil: they are only checked). validate and compile both
// call it, so they report the same problems. shape's ruler checks each
// SLO at its spec's lines.
func check(e *env, specs []string, catalogs catalogFlag, metrics metricsFlag, shape shapeFlags, opts compiler.Options, add func(artifact.File) error) (spec.Result, error) {
	var checkers []spec.Checker
	rc, err := shape.rulerChecker()
	if err != nil {
		return spec.Result{}, err
	}
	if rc != nil {
		checkers = append(checkers, rc)
	}
	res, err := loadScraped(e, specs, catalogs, metrics, checkers...)
	if err != nil {
		return res, err
	}
	if add == nil {
		var c artifact.Checker
		add = c.Add
	}
	defer compiler.TuneGC(len(res.Set.SLOs))()
	return res, compiler.CompileTo(res.Set, opts, add)
}
