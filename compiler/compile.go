// Package compiler runs every backend over a model.Set and returns the
// validated artifacts; nothing is written here.
package compiler

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// Backend builds one kind of artifact from the model.
type Backend struct {
	Name  string
	Build func(model.Set) (artifact.Set, error)
}

// Backends are the artifact generators, in output order.
func Backends() []Backend {
	return []Backend{
		{Name: "prometheus rules", Build: rules.Build},
	}
}

// Compile runs every backend. Any error means no artifact at all.
func Compile(set model.Set) (artifact.Set, error) {
	var out artifact.Set
	for _, b := range Backends() {
		files, err := b.Build(set)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name, err)
		}
		out = append(out, files...)
	}
	out.Sort()
	if err := out.Check(); err != nil {
		return nil, err
	}
	return out, nil
}
