// Package artifact holds generated files and writes them: all or nothing.
package artifact

import (
	"bytes"
	"fmt"
	"path"
	"slices"
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
	var c Checker
	for _, f := range s {
		if err := c.Add(f); err != nil {
			return err
		}
	}
	return nil
}

// Checker checks files one at a time as Set.Check does, keeping only
// their paths.
type Checker struct {
	paths map[string]bool
}

// Add checks f's path, its documents and that no earlier file had its path.
func (c *Checker) Add(f File) error {
	if err := checkFile(f); err != nil {
		return err
	}
	if c.paths == nil {
		c.paths = map[string]bool{}
	}
	if c.paths[f.Path] {
		return fmt.Errorf("two artifacts would be written to %s", f.Path)
	}
	c.paths[f.Path] = true
	return nil
}

// Len is the number of files added.
func (c *Checker) Len() int { return len(c.paths) }

// Paths are the paths of the files added, sorted.
func (c *Checker) Paths() []string {
	out := make([]string, 0, len(c.paths))
	for p := range c.paths {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// checkFile checks one file's path and, for YAML, its documents.
func checkFile(f File) error {
	if err := checkPath(f.Path); err != nil {
		return err
	}
	return checkOneDocument(f)
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
		if content {
			// Past the first content only a marker line matters: find
			// the next line that starts like one instead of reading
			// every line.
			return laterMarker(f.Path, rest, line)
		}
		line++
		l := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		switch {
		case isMarker(l, "---"):
			if started {
				return fmt.Errorf("generated %s starts a second YAML document at line %d, want exactly one", f.Path, line)
			}
			started = true
			content = len(bytes.TrimSpace(l[3:])) > 0
		case isMarker(l, "..."):
			return fmt.Errorf("generated %s ends a YAML document at line %d, want exactly one document", f.Path, line)
		default:
			t := bytes.TrimSpace(l)
			content = len(t) > 0 && t[0] != '#'
		}
	}
	if !content {
		return fmt.Errorf("generated %s holds no YAML document, want exactly one", f.Path)
	}
	return nil
}

// laterMarker refuses a marker line in rest, the lines after line once a
// document holds content: a second document or the end of the first. It
// looks for the markers' three bytes, far rarer than line breaks, and then
// at the line around them.
func laterMarker(name string, rest []byte, line int) error {
	dash, dots := atLineStart(rest, 0, "---"), atLineStart(rest, 0, "...")
	for dash >= 0 || dots >= 0 {
		at := dash
		if at < 0 || dots >= 0 && dots < dash {
			at = dots
		}
		if l := rest[at:]; isMarker(l, "---") || isMarker(l, "...") {
			n := line + 1 + bytes.Count(rest[:at], []byte("\n"))
			if l[0] == '-' {
				return fmt.Errorf("generated %s starts a second YAML document at line %d, want exactly one", name, n)
			}
			return fmt.Errorf("generated %s ends a YAML document at line %d, want exactly one document", name, n)
		}
		if at == dash {
			dash = atLineStart(rest, at+1, "---")
		} else {
			dots = atLineStart(rest, at+1, "...")
		}
	}
	return nil
}

// atLineStart is the first index from from on where m starts a line of b
// (b starts with one), or -1.
func atLineStart(b []byte, from int, m string) int {
	for from < len(b) {
		i := bytes.Index(b[from:], []byte(m))
		if i < 0 {
			return -1
		}
		if at := from + i; at == 0 || b[at-1] == '\n' {
			return at
		}
		from += i + 1
	}
	return -1
}

// isMarker is true for a line that is the document marker m, alone or
// followed by white space; l may run on past the line's end.
func isMarker(l []byte, m string) bool {
	if !bytes.HasPrefix(l, []byte(m)) {
		return false
	}
	if len(l) == len(m) {
		return true
	}
	switch l[len(m)] {
	case ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
