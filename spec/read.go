package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/inferslo/inferslo/spec/input"
)

// MaxFileSize caps a spec file: specs are hand-written, and a cap keeps a
// stray /dev/zero-like file from exhausting memory.
const MaxFileSize = 10 << 20

// Discover expands folders into the spec files below them, sorted. Names are
// relative to the current directory when the file lies below it, so an
// absolute and a relative invocation name files alike.
//
// Below a folder, a symbolic link is read only when it resolves to a regular
// file inside that folder; links out of the folder are refused, so a spec
// folder cannot make inferslo read (and report) a file elsewhere. A file
// named on the command line is read wherever it points, as the user chose it.
func Discover(paths ...string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("no spec files or folders given")
	}
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.ToSlash(displayName(p))
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, p := range paths {
		if err := checkName(p); err != nil {
			return nil, err
		}
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("spec path: %w", err)
		}
		if !info.IsDir() {
			add(p)
			continue
		}
		found, err := walkRoot(p)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("folder %s holds no spec files (*.yaml, *.yml, *.json)", p)
		}
		for _, f := range found {
			add(f)
		}
	}
	return files, nil
}

// walkRoot lists the spec files below root, refusing links out of it.
func walkRoot(root string) ([]string, error) {
	// WalkDir does not descend into a root that is itself a link, so walk
	// the folder it resolves to and name files below the root as given.
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", root, err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", root, err)
	}
	var found []string
	var refused error
	err = filepath.WalkDir(real, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && q != real && (strings.HasPrefix(d.Name(), ".") || input.IsOutput(q)) {
			// An output folder below the specs (compile sp -o sp/out)
			// holds artifacts, not specs: given by name it is read.
			return filepath.SkipDir
		}
		if d.IsDir() || !isSpecFile(q) {
			return nil
		}
		rel, err := filepath.Rel(real, q)
		if err != nil {
			return err
		}
		name := filepath.Join(root, rel)
		if refused = checkName(name); refused != nil {
			return fs.SkipAll
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(q)
			if err != nil {
				refused = fmt.Errorf("spec %s is a broken symbolic link", name)
				return fs.SkipAll
			}
			if !input.Within(real, target) {
				refused = fmt.Errorf("spec %s is a symbolic link out of folder %s; refusing to read it", name, root)
				return fs.SkipAll
			}
		}
		found = append(found, name)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", root, err)
	}
	if refused != nil {
		return nil, refused
	}
	sort.Strings(found)
	return found, nil
}

// checkName refuses file names with control characters: a name reaches
// generated-file headers and error messages, where a newline could start a
// new YAML document or forge a line of output; nor may it hold template
// delimiters or Grafana variables, as other spec text may not.
func checkName(p string) error {
	for _, r := range p {
		if unicode.IsControl(r) {
			return fmt.Errorf("spec path %q holds a control character; rename it", p)
		}
	}
	// The path reaches alert annotations and dashboard text too.
	if msg := textProblem(p, oneLine); msg != "" {
		return fmt.Errorf("spec path %q %s; rename it", p, msg)
	}
	return nil
}

// displayName is p relative to the current directory when p is absolute
// and lies below it, else p cleaned.
func displayName(p string) string {
	p = filepath.Clean(p)
	if !filepath.IsAbs(p) {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if input.Within(wd, p) {
		if rel, err := filepath.Rel(wd, p); err == nil {
			return rel
		}
	}
	return p
}

// readSpec reads one spec file: a regular file of at most MaxFileSize
// bytes, so that neither a FIFO nor /dev/zero can hang or exhaust a run.
func readSpec(name string) ([]byte, error) {
	return input.ReadInput("spec", "", name, MaxFileSize)
}

// ReadFiles discovers and reads spec files (and other files handed to
// inferslo as specs are), with the checks of Discover and the size cap.
func ReadFiles(paths ...string) ([]Source, error) {
	files, err := Discover(paths...)
	if err != nil {
		return nil, err
	}
	sources := make([]Source, len(files))
	for i, f := range files {
		data, err := readSpec(f)
		if err != nil {
			return nil, err
		}
		sources[i] = Source{Name: f, Data: data}
	}
	return sources, nil
}
