package artifact

import (
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
	if err := checkReplaceable(dir, command); err != nil {
		return nil, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", parent, err)
	}
	if err := removeStale(dir); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, tmpPrefix(dir))
	if err != nil {
		return nil, fmt.Errorf("create temporary folder: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Stage{dir: dir, tmp: tmp, command: command, folders: map[string]bool{}}, nil
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

// Commit writes the marker listing every file and swaps the stage in.
func (s *Stage) Commit() error {
	if err := s.write(markerFile(s.command, s.Paths())); err != nil {
		s.Abort()
		return err
	}
	if err := swap(s.tmp, s.dir); err != nil {
		s.Abort()
		return err
	}
	return nil
}

// Abort removes the stage; the output stays as it was.
func (s *Stage) Abort() { os.RemoveAll(s.tmp) }

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
