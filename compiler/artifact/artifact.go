// Package artifact holds generated files and writes them: all or nothing.
package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
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
	dec := yaml.NewDecoder(bytes.NewReader(f.Data))
	n := 0
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("generated %s is not valid YAML: %w", f.Path, err)
		}
		n++
	}
	if n != 1 {
		return fmt.Errorf("generated %s holds %d YAML documents, want exactly one", f.Path, n)
	}
	return nil
}
