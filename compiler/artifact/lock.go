package artifact

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LockWait bounds how long a run waits for another run writing the same
// output folder: long enough for a large compilation to finish, short
// enough that a hung writer fails the next run instead of hanging CI.
const LockWait = 5 * time.Minute

// lockPoll is how often a waiting run tries the lock again.
const lockPoll = 50 * time.Millisecond

// BusyError is a lock another live process holds.
type BusyError struct {
	Path string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s is held by another running inferslo", e.Path)
}

// Lock is an advisory lock on a path (flock), held by an open file: the
// system releases it when the process ends, however it ends, so a killed
// run never leaves a lock that blocks the next one.
type Lock struct {
	f    *os.File
	path string
	// unlink: the path is a lock file of its own, removed on Release.
	unlink bool
}

// lockFile takes the lock file at path, creating it, and waits up to wait
// while another process holds it.
//
// A lock file removed by its holder on release could be locked by a waiter
// that opened it before: the waiter would hold a lock on a file no longer
// at path, beside a new holder of the new file. So a lock counts only when
// path still names the locked file once it is held; otherwise it is taken
// again.
//
// The lock file is opened without following a symbolic link, and is never
// anything but a regular file; every pass, the retry included, ends at the
// deadline.
func lockFile(path string, wait time.Duration) (*Lock, error) {
	deadline := time.Now().Add(wait)
	for {
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			kind := "a special file"
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				kind = "a symbolic link"
			case fi.IsDir():
				kind = "a folder"
			}
			return nil, fmt.Errorf("lock %s is not a regular file but %s; remove it", path, kind)
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
		if err != nil {
			return nil, fmt.Errorf("create lock %s: %w", path, err)
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return nil, fmt.Errorf("lock %s is not a regular file; remove it", path)
		}
		l, err := lockUntil(f, path, deadline)
		if err != nil || l != nil {
			return l, err
		}
		if time.Now().After(deadline) {
			return nil, &BusyError{Path: path}
		}
	}
}

// lockUntil locks f, open at path, polling until deadline. It returns nil
// and no error when path no longer names f, for the caller to try again.
func lockUntil(f *os.File, path string, deadline time.Time) (*Lock, error) {
	for {
		err := tryLock(f)
		if err == nil {
			break
		}
		if !errors.Is(err, errBusy) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, &BusyError{Path: path}
		}
		time.Sleep(lockPoll)
	}
	if !stillAt(f, path) {
		f.Close()
		return nil, nil
	}
	return &Lock{f: f, path: path, unlink: true}, nil
}

// stillAt reports whether path names the open file f.
func stillAt(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(held, now)
}

// Release removes a lock file and then unlocks it (see lockFile); a
// locked folder is only unlocked.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	if l.unlink {
		os.Remove(l.path)
	}
	l.f.Close()
	l.f = nil
}

// LockedTemp creates a folder in parent named pattern (as os.MkdirTemp)
// and locks it for as long as the run lives, so that RemoveUnlocked in
// another run leaves it alone.
func LockedTemp(parent, pattern string) (string, *Lock, error) {
	deadline := time.Now().Add(LockWait)
	for {
		if time.Now().After(deadline) {
			return "", nil, &BusyError{Path: filepath.Join(parent, pattern)}
		}
		dir, err := os.MkdirTemp(parent, pattern)
		if err != nil {
			return "", nil, fmt.Errorf("create temporary folder: %w", err)
		}
		f, err := os.Open(dir)
		if err != nil {
			os.Remove(dir)
			return "", nil, fmt.Errorf("create temporary folder: %w", err)
		}
		// Another run may have found it unlocked and be removing it: then
		// the lock waits for that run and finds the folder gone.
		l, err := lockUntil(f, dir, deadline)
		if err != nil {
			return "", nil, err
		}
		if l != nil {
			l.unlink = false
			return dir, l, nil
		}
	}
}

// RemoveUnlocked removes the folders os.MkdirTemp made in parent from
// prefix (the prefix and digits, or those and ".old" for an output moved
// aside) unless a live run holds their lock (see LockedTemp): those of
// killed runs. Only names of that form count, so the folders of an output
// named "out.tmp-x" are not taken for those of "out".
func RemoveUnlocked(parent, prefix string) error {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return fmt.Errorf("list temporary folders: %w", err)
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		rest = strings.TrimSuffix(rest, ".old")
		if !ok || !e.IsDir() || rest == "" || strings.Trim(rest, "0123456789") != "" {
			continue
		}
		if err := removeIfUnlocked(filepath.Join(parent, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// removeIfUnlocked removes the folder dir while holding its lock, so that
// its creator, if it is just starting, finds it gone and makes another.
func removeIfUnlocked(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return nil // gone meanwhile
	}
	defer f.Close()
	if err := tryLock(f); err != nil {
		return nil // a live run's
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the temporary folder of a stopped run: %w", err)
	}
	return nil
}
