package compiler

import (
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
)

// Backend builds one kind of artifact from the model. The spec validated
// the model, so a backend trusts it: an error is an artifact failing its
// own validation (promtool's rule parser, the CRD schema), not a spec
// problem.
type Backend interface {
	// Name says what the backend builds, in errors ("keda scaledobjects").
	Name() string
	// PerService reports whether a service's artifacts depend on its own
	// SLOs only: such a backend runs service by service, and a compilation
	// holds a few services' artifacts at a time.
	PerService() bool
	// Build returns the artifacts of set. What a user should know about
	// them the spec reports, located, before any backend runs.
	Build(set model.Set) (artifact.Set, error)
}
