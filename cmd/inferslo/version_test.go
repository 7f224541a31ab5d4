package main

import (
	"runtime/debug"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{
			"a build in a clone names the stamped commit",
			debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "false"}}},
			"inferslo (devel), commit 0123abcd, go1.26.0",
		},
		{
			"a build with uncommitted changes says so",
			debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}},
			"inferslo (devel), commit 0123abcd (modified), go1.26.0",
		},
		{
			"go install at a commit takes the commit from the pseudo-version",
			debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v0.1.1-0.20261126120000-abcdef012345"}},
			"inferslo v0.1.1-0.20261126120000-abcdef012345, commit abcdef012345, go1.26.1",
		},
		{
			"go install at a tag names the tag",
			debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v0.2.0"}},
			"inferslo v0.2.0, commit unknown, go1.26.1",
		},
		{
			"a build without module information is a development build",
			debug.BuildInfo{GoVersion: "go1.26.1"},
			"inferslo (devel), commit unknown, go1.26.1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeBuild(&tt.bi); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
