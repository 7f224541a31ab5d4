package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
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
func (s Set) Write(dir, command string) (err error) {
	if err := s.Check(); err != nil {
		return err
	}
	dir, err = resolveOutput(dir)
	if err != nil {
		return err
	}
	if err := checkReplaceable(dir, command); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", parent, err)
	}
	if err := removeStale(dir); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, tmpPrefix(dir))
	if err != nil {
		return fmt.Errorf("create temporary folder: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for _, f := range s.withMarker(command) {
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create folder for %s: %w", f.Path, err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	return swap(tmp, dir)
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

// removeStale deletes temporary folders a killed earlier run left beside
// dir; their names are inferslo's own.
func removeStale(dir string) error {
	stale, err := filepath.Glob(filepath.Join(filepath.Dir(dir), globEscape(tmpPrefix(dir))+"*"))
	if err != nil {
		return err
	}
	for _, p := range stale {
		if info, err := os.Lstat(p); err != nil || !info.IsDir() {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("remove a stale temporary folder: %w", err)
		}
	}
	return nil
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
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
	want := map[string][]byte{}
	for _, f := range s.withMarker(command) {
		want[f.Path] = f.Data
	}
	have := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := readCompared(p, d)
		if err != nil {
			return err
		}
		have[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	names := map[string]bool{}
	for n := range want {
		names[n] = true
	}
	for n := range have {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var out bytes.Buffer
	for _, n := range sorted {
		w, inWant := want[n]
		h, inHave := have[n]
		if inWant && inHave && bytes.Equal(w, h) {
			continue
		}
		oldName, newName := path.Join(dir, n), path.Join(dir, n)
		if !inHave {
			oldName = "/dev/null"
		}
		if !inWant {
			newName = "/dev/null"
		}
		out.Write(diff.Diff(oldName, h, newName, w))
	}
	return out.Bytes(), nil
}

// readCompared reads a file of the output folder for a comparison; what is
// not a regular file, or is too large to be inferslo's, reads as a note.
func readCompared(p string, d fs.DirEntry) ([]byte, error) {
	if !d.Type().IsRegular() {
		return []byte("(not a regular file)\n"), nil
	}
	b, err := ReadRegular(p, maxCompared)
	var notRegular *NotRegularError
	var tooLarge *TooLargeError
	switch {
	case errors.As(err, &notRegular):
		return []byte("(not a regular file)\n"), nil
	case errors.As(err, &tooLarge):
		return []byte(fmt.Sprintf("(%v)\n", err)), nil
	}
	return b, err
}
