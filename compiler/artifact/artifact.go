// Package artifact holds generated files and writes them: all or nothing.
package artifact

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
)

// File is one generated file, its path relative to the output folder.
type File struct {
	Path string
	Data []byte
}

// Set is the files of one compilation.
type Set []File

// Sort orders files by path, so output and diffs are stable.
func (s Set) Sort() {
	sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path })
}

// Check reports duplicate or unsafe paths, and YAML files that are not
// exactly one YAML document: a second document in a file meant for
// `kubectl apply` would create an object no spec asked for.
func (s Set) Check() error {
	seen := map[string]bool{}
	for _, f := range s {
		if err := checkPath(f.Path); err != nil {
			return err
		}
		if err := checkOneDocument(f); err != nil {
			return err
		}
		if seen[f.Path] {
			return fmt.Errorf("two artifacts would be written to %s", f.Path)
		}
		seen[f.Path] = true
	}
	return nil
}

func checkOneDocument(f File) error {
	switch strings.ToLower(path.Ext(f.Path)) {
	case ".yaml", ".yml":
	default:
		return nil
	}
	// A YAML stream starts a new document only at a marker line ("---" or
	// "..." at column 0, YAML 1.2 section 9.1): no scalar, quoted or block,
	// may hold one. So counting marker lines is exact, and it costs a scan
	// instead of a parse of every file; the encoders' own tests decode it.
	content, started, line := false, false, 0
	for rest := f.Data; len(rest) > 0; {
		line++
		l := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		switch {
		case isMarker(l, "---"):
			if content || started {
				return fmt.Errorf("generated %s starts a second YAML document at line %d, want exactly one", f.Path, line)
			}
			started = true
			content = len(bytes.TrimSpace(l[3:])) > 0
		case isMarker(l, "..."):
			return fmt.Errorf("generated %s ends a YAML document at line %d, want exactly one document", f.Path, line)
		case !content:
			t := bytes.TrimSpace(l)
			content = len(t) > 0 && t[0] != '#'
		}
	}
	if !content {
		return fmt.Errorf("generated %s holds no YAML document, want exactly one", f.Path)
	}
	return nil
}

// isMarker is true for a line that is the document marker m, alone or
// followed by white space.
func isMarker(l []byte, m string) bool {
	return bytes.HasPrefix(l, []byte(m)) && (len(l) == len(m) || l[len(m)] == ' ' || l[len(m)] == '\t' || l[len(m)] == '\r')
}
