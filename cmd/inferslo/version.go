package main

import (
	"fmt"
	"runtime/debug"
)

type versionCmd struct{}

func (versionCmd) Run(e *env) error {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	fmt.Fprintf(e.stdout, "inferslo %s\n", v)
	return nil
}
