// Package artifact holds generated files and writes them: all or nothing.
package artifact

import (
	"fmt"
	"sort"
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

// Check reports duplicate or unsafe paths.
func (s Set) Check() error {
	seen := map[string]bool{}
	for _, f := range s {
		if err := checkPath(f.Path); err != nil {
			return err
		}
		if seen[f.Path] {
			return fmt.Errorf("two artifacts would be written to %s", f.Path)
		}
		seen[f.Path] = true
	}
	return nil
}
