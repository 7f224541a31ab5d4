package artifact

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Stage writes the files of one run into a temporary folder beside the
// output as they are made, and swaps the folder in on Commit: a run holds
// one file at a time rather than all of them, and a failure before Commit
// leaves the output as it was.
type Stage struct {
	Checker
	dir, tmp, command string
	// lock keeps other runs from writing dir meanwhile; tmpLock marks tmp
	// as a live run's.
	lock, tmpLock *Lock
	// folders are those created in the stage: a compilation writes
	// thousands of files into a handful of folders.
	folders map[string]bool
}

// NewStage prepares to replace dir with the output of the named command;
// it refuses a dir holding files inferslo did not write (see Marker).
func NewStage(dir, command string) (*Stage, error) {
	dir, err := resolveOutput(dir)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", parent, err)
	}
	// One writer at a time: a second run waits, then checks the folder the
	// first one left.
	lock, err := lockFile(lockPath(dir), LockWait)
	var busy *BusyError
	if errors.As(err, &busy) {
		return nil, fmt.Errorf("output folder %s is being written by another inferslo run (it holds %s) and was still after %v; try again when it has finished", dir, busy.Path, LockWait)
	}
	if err != nil {
		return nil, err
	}
	st, err := newStage(dir, command)
	if err != nil {
		lock.Release()
		return nil, err
	}
	st.lock = lock
	return st, nil
}

// newStage makes the stage of dir, whose lock the caller holds.
func newStage(dir, command string) (*Stage, error) {
	if err := checkReplaceable(dir, command, 5); err != nil {
		return nil, err
	}
	if err := removeStale(dir); err != nil {
		return nil, err
	}
	tmp, tmpLock, err := LockedTemp(filepath.Dir(dir), tmpPrefix(dir)+"*")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		tmpLock.Release()
		return nil, err
	}
	return &Stage{dir: dir, tmp: tmp, command: command, tmpLock: tmpLock, folders: map[string]bool{}}, nil
}

// Add checks one file (see Set.Check) and writes it to the stage.
func (s *Stage) Add(f File) error {
	if err := s.Checker.Add(f); err != nil {
		return err
	}
	return s.write(f)
}

func (s *Stage) write(f File) error {
	p := filepath.Join(s.tmp, filepath.FromSlash(f.Path))
	if folder := filepath.Dir(p); !s.folders[folder] {
		if err := os.MkdirAll(folder, 0o755); err != nil {
			return fmt.Errorf("create folder for %s: %w", f.Path, err)
		}
		s.folders[folder] = true
	}
	if err := os.WriteFile(p, f.Data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", f.Path, err)
	}
	return nil
}

// Commit writes the marker listing every file, swaps the stage in, and
// checks that the folder now holds exactly what the marker lists: success
// is reported only for an output that is whole.
func (s *Stage) Commit() error {
	defer s.release()
	if err := s.write(markerFile(s.command, s.Paths())); err != nil {
		os.RemoveAll(s.tmp)
		return err
	}
	if err := swap(s.tmp, s.dir); err != nil {
		os.RemoveAll(s.tmp)
		return err
	}
	return verifyOutput(s.dir, s.command, s.Paths())
}

// Abort removes the stage; the output stays as it was.
func (s *Stage) Abort() {
	os.RemoveAll(s.tmp)
	s.release()
}

func (s *Stage) release() {
	s.tmpLock.Release()
	s.lock.Release()
}

// markerFile is the marker of a folder holding paths, written by command.
func markerFile(command string, paths []string) File {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `inferslo %s`, which replaces this folder as a whole. DO NOT EDIT.\n", command)
	fmt.Fprintf(&b, "command %s\n", command)
	for _, p := range paths {
		b.WriteString("file " + p + "\n")
	}
	return File{Path: Marker, Data: []byte(b.String())}
}

// verifyOutput checks that dir holds the marker of command listing exactly
// paths, and those files and no others.
func verifyOutput(dir, command string, paths []string) error {
	m, err := readMarker(dir)
	if err != nil {
		return fmt.Errorf("output folder %s after writing: %w", dir, err)
	}
	whole := m.line == command && len(m.files) == len(paths)
	for _, p := range paths {
		whole = whole && m.files[p]
	}
	if !whole {
		return fmt.Errorf("output folder %s was replaced by another run after this one wrote it: its marker lists other files", dir)
	}
	foreign, err := foreignFiles(dir, m)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return fmt.Errorf("output folder %s holds files it was not written with (%s) after this run wrote it", dir, strings.Join(limitList(foreign, 5), ", "))
	}
	for _, p := range paths {
		info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil || !info.Mode().IsRegular() {
			return fmt.Errorf("output folder %s lacks %s after this run wrote it", dir, p)
		}
	}
	return nil
}
