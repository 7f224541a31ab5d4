//go:build !unix

package artifact

import (
	"errors"
	"os"
)

// errBusy is never returned where there is no flock: runs are not kept
// apart there.
var errBusy = errors.New("locked")

// tryLock succeeds: without flock, one writer per folder is the user's to
// ensure.
func tryLock(*os.File) error { return nil }

// noFollow is checked with Lstat before opening where there is no flag.
const noFollow = 0
