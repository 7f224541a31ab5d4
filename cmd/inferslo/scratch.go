package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/inferslo/inferslo/compiler/artifact"
)

// scratchPrefix names the scratch folders of runs.
const scratchPrefix = "inferslo-"

// withScratch runs f with a temporary folder of the run's own as the
// system's (TMPDIR), and removes it when f returns or the run is
// interrupted (SIGINT, SIGTERM): the simulations of test and render keep
// their storage there, one folder per replay, which an interrupted run
// would otherwise leave behind. An interrupted run exits 128 plus the
// signal's number, as shells report it.
func withScratch(f func() int) int {
	// A run killed outright (SIGKILL, out of memory) cannot remove its
	// folder: the next run removes those no live run holds.
	_ = artifact.RemoveUnlocked(os.TempDir(), scratchPrefix)
	dir, lock, err := artifact.LockedTemp("", scratchPrefix+"*")
	if err != nil {
		return f()
	}
	defer lock.Release()
	defer os.RemoveAll(dir)
	prev, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	defer func() {
		if had {
			os.Setenv("TMPDIR", prev)
		} else {
			os.Unsetenv("TMPDIR")
		}
	}()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		s, ok := <-signals
		if !ok {
			return
		}
		os.RemoveAll(dir)
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	return f()
}
