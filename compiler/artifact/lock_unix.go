//go:build unix

package artifact

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// errBusy is a lock another open file holds.
var errBusy = unix.EWOULDBLOCK

// tryLock takes an exclusive advisory lock on f without waiting.
func tryLock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// noFollow opens a lock file without following a symbolic link at its
// path: a link planted there would have the run create and lock its
// target, anywhere writable.
const noFollow = unix.O_NOFOLLOW
