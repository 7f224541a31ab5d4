package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"golang.org/x/mod/module"
)

type versionCmd struct{}

func (versionCmd) Run(e *env) error {
	fmt.Fprintln(e.stdout, versionText())
	return nil
}

// versionText names the module version, the commit and the Go version the
// binary was built with, for bug reports.
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("inferslo (devel), commit unknown, %s", runtime.Version())
	}
	return describeBuild(bi)
}

// describeBuild reads the commit from the VCS stamp of a build in a clone,
// or from the pseudo-version of `go install ...@<commit>`; a tagged `go
// install ...@vX.Y.Z` carries neither, and its version names the commit.
func describeBuild(bi *debug.BuildInfo) string {
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	commit, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if commit == "" && module.IsPseudoVersion(version) {
		commit, _ = module.PseudoVersionRev(version)
	}
	switch {
	case commit == "":
		commit = "commit unknown"
	case modified:
		commit = "commit " + commit + " (modified)"
	default:
		commit = "commit " + commit
	}
	return fmt.Sprintf("inferslo %s, %s, %s", version, commit, bi.GoVersion)
}
