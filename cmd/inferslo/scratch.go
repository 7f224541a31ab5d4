package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/inferslo/inferslo/compiler/artifact"
)

// scratchPrefix names the scratch folders of runs.
const scratchPrefix = "inferslo-"

// withScratch runs f with a temporary folder of the run's own, and
// removes it when f returns or the run is
// interrupted (SIGINT, SIGTERM): the simulations of test and render keep
// their storage there, one folder per replay, which an interrupted run
// would otherwise leave behind. An interrupted run exits 128 plus the
// signal's number, as shells report it.
func withScratch(f func(dir string) int) int {
	// A run killed outright (SIGKILL, out of memory) cannot remove its
	// folder: the next run removes those no live run holds.
	_ = artifact.RemoveUnlocked(os.TempDir(), scratchPrefix)
	dir, lock, err := artifact.LockedTemp("", scratchPrefix+"*")
	if err != nil {
		return f("")
	}
	defer lock.Release()
	// One of the two ends removes the folder: an interrupt, which exits,
	// or f returning. f may return while an interrupt is being handled
	// (its replays fail as their folders go), and must then not exit
	// before the folder is gone.
	var ending sync.Mutex
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-signals
		ending.Lock()
		removeScratch(dir)
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	code := f(dir)
	ending.Lock()
	signal.Stop(signals)
	removeScratch(dir)
	return code
}

// removeScratch removes the scratch folder, on an interrupt while replays
// may still be starting: renamed first, so that no new replay can create
// a folder in it (their scratch folder is gone), then removed until nothing
// is left, since a replay already running may add a file while RemoveAll
// walks the tree. The ".old" name is one the next run's RemoveUnlocked
// still recognises, should this run be killed while removing.
func removeScratch(dir string) {
	gone := dir + ".old"
	if os.Rename(dir, gone) != nil {
		gone = dir
	}
	// A replay that chose its folder before the rename may still create
	// it below the old name (its storage makes the folders it opens), so
	// the old name is removed too, until neither is there.
	for range 100 {
		errGone, errDir := os.RemoveAll(gone), os.RemoveAll(dir)
		if _, err := os.Lstat(dir); errGone == nil && errDir == nil && os.IsNotExist(err) {
			return
		}
	}
}
