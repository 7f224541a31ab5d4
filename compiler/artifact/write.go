package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/inferslo/inferslo/spec/input"
)

func checkPath(p string) error {
	if p == "" || path.IsAbs(p) || strings.HasPrefix(path.Clean(p), "..") || path.Clean(p) != p || p == Marker {
		return fmt.Errorf("artifact path %q is not a clean relative path", p)
	}
	return nil
}

// Write replaces dir with exactly the files of s, as the output of the
// named inferslo command. Files go to a temporary folder beside dir first;
// dir is swapped in only when all of them are written, so a failure leaves
// dir as it was and nothing half-written. When dir is a symbolic link, the
// folder it points to is replaced and the link kept.
func (s Set) Write(dir, command string) error {
	st, err := NewStage(dir, command)
	if err != nil {
		return err
	}
	for _, f := range s {
		if err := st.Add(f); err != nil {
			st.Abort()
			return err
		}
	}
	return st.Commit()
}

// resolveOutput follows a link at dir to the folder it names, and names
// "." or ".." by their absolute path, so the temporary folder goes beside
// the output rather than into it.
func resolveOutput(dir string) (string, error) {
	dir = filepath.Clean(dir)
	if b := filepath.Base(dir); b == "." || b == ".." {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		dir = abs
	}
	info, err := os.Lstat(dir)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return dir, nil
	}
	target, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("output %s is a symbolic link that leads nowhere: %w", dir, err)
	}
	return target, nil
}

// tmpPrefix names the temporary folders of dir: hidden, beside it.
func tmpPrefix(dir string) string {
	return "." + filepath.Base(dir) + ".tmp-"
}

// lockPath is the lock file of dir: beside it, hidden, as its temporary
// folders are.
func lockPath(dir string) string {
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".lock")
}

// removeStale deletes the temporary folders killed earlier runs left beside
// dir.
func removeStale(dir string) error {
	return RemoveUnlocked(filepath.Dir(dir), tmpPrefix(dir))
}

// swapAside puts tmp at dir by two renames: dir aside, tmp in. Between
// them dir is briefly missing; a failure moves the old folder back.
func swapAside(tmp, dir string) error {
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("move old %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return fmt.Errorf("move new output into %s: %w", dir, err)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove old output: %w", err)
		}
	}
	return nil
}

// maxCompared bounds each file --check reads from the output folder.
const maxCompared = 64 << 20

// Diff compares s, as the output of the named command, with what dir holds
// and returns a unified diff, empty when dir is up to date. Files in dir that
// s would not write count as removed. Only regular files are read, each up to
// a bound; anything else in dir differs.
func (s Set) Diff(dir, command string) ([]byte, error) {
	c, err := NewComparison(dir, command)
	if err != nil {
		return nil, err
	}
	for _, f := range s {
		if err := c.Add(f); err != nil {
			return nil, err
		}
	}
	return c.Diff()
}

// Comparison compares the files of a run with what an output folder holds,
// one file at a time, keeping only the differences.
type Comparison struct {
	Checker
	// dir is the folder as named, for the diff; root is where it leads.
	dir, root, command string
	have               map[string]fs.DirEntry // the folder's files, not yet read
	diffs              map[string][]byte
}

// NewComparison lists dir, which may be missing, for comparing the output
// of the named command with it. It follows a link at dir as Write does, and
// refuses what Write would refuse (a folder without a marker, or holding
// files inferslo did not write), naming every such file but never showing
// its content.
func NewComparison(dir, command string) (*Comparison, error) {
	root, err := resolveOutput(dir)
	if err != nil {
		return nil, err
	}
	if err := checkReplaceable(root, command, -1); err != nil {
		return nil, err
	}
	c := &Comparison{dir: dir, root: root, command: command, have: map[string]fs.DirEntry{}, diffs: map[string][]byte{}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		c.have[filepath.ToSlash(rel)] = d
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return c, nil
}

// Add checks one file (see Set.Check) and compares it with the folder's.
func (c *Comparison) Add(f File) error {
	if err := c.Checker.Add(f); err != nil {
		return err
	}
	return c.compare(f.Path, f.Data, true)
}

func (c *Comparison) compare(name string, want []byte, inWant bool) error {
	var have []byte
	d, inHave := c.have[name]
	if inHave {
		b, err := readCompared(filepath.Join(c.root, filepath.FromSlash(name)), d)
		if err != nil {
			return fmt.Errorf("read %s: %w", c.dir, err)
		}
		have = b
	}
	if inWant && inHave && bytes.Equal(want, have) {
		return nil
	}
	oldName, newName := path.Join(c.dir, name), path.Join(c.dir, name)
	if !inHave {
		oldName = "/dev/null"
	}
	if !inWant {
		newName = "/dev/null"
	}
	out, err := unified(oldName, have, newName, want)
	if err != nil {
		return err
	}
	if len(out) == 0 {
		// An empty file that is there on one side only: no line differs,
		// yet the folder does.
		out = []byte(fmt.Sprintf("--- %s\n+++ %s\n", oldName, newName))
	}
	c.diffs[name] = out
	return nil
}

// Diff compares the marker and the folder's files no run added, and
// returns every difference as one unified diff in path order, empty when
// the folder is up to date.
func (c *Comparison) Diff() ([]byte, error) {
	m := markerFile(c.command, c.Paths())
	if err := c.compare(m.Path, m.Data, true); err != nil {
		return nil, err
	}
	for name := range c.have {
		if !c.paths[name] && name != Marker {
			if err := c.compare(name, nil, false); err != nil {
				return nil, err
			}
		}
	}
	names := make([]string, 0, len(c.diffs))
	for n := range c.diffs {
		names = append(names, n)
	}
	slices.Sort(names)
	var out bytes.Buffer
	for _, n := range names {
		out.Write(c.diffs[n])
	}
	return out.Bytes(), nil
}

// readCompared reads a file of the output folder for a comparison; what is
// not a regular file, or is too large to be inferslo's, reads as a note.
func readCompared(p string, d fs.DirEntry) ([]byte, error) {
	if !d.Type().IsRegular() {
		return []byte("(not a regular file)\n"), nil
	}
	b, err := input.ReadRegular(p, maxCompared)
	var notRegular *input.NotRegularError
	var tooLarge *input.TooLargeError
	switch {
	case errors.As(err, &notRegular):
		return []byte("(not a regular file)\n"), nil
	case errors.As(err, &tooLarge):
		return []byte(fmt.Sprintf("(%v)\n", err)), nil
	}
	return b, err
}
