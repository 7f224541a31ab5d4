package prom

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/inferslo/inferslo/spec/input"

	"github.com/inferslo/inferslo/compiler/artifact"
)

// maxRuleFile bounds a rule file read for a test: a compile output's rule
// file for a large fleet is a few MB.
const maxRuleFile = 64 << 20

// ReadRuleFiles reads every *.rules.yaml below dir (an `inferslo compile`
// output folder, or its prometheus/ subfolder), for RunFiles; with none
// there, the *.yaml files in dir itself (its ruler/ subfolder, whose groups
// may be chained for a ruler's limits). Paths are relative to dir, with
// forward slashes, in lexical order.
//
// A link below dir is read only when it stays inside dir (see
// input.ReadIn); each file is at most maxRuleFile bytes.
func ReadRuleFiles(dir string) (artifact.Set, error) {
	var files artifact.Set
	// loose are the *.yaml files in dir itself, read when no *.rules.yaml
	// is found.
	var loose []string
	// WalkDir does not descend into a root that is itself a link.
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("read rule files: %w", err)
	}
	read := func(p string) error {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := input.ReadInput("rule file", dir, rel, maxRuleFile)
		if err != nil {
			return err
		}
		files = append(files, artifact.File{Path: filepath.ToSlash(rel), Data: data})
		return nil
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read rule files: %w", err)
		}
		switch {
		case d.IsDir():
		case strings.HasSuffix(d.Name(), ".rules.yaml"):
			return read(p)
		case strings.HasSuffix(d.Name(), ".yaml") && filepath.Dir(p) == root:
			loose = append(loose, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		for _, p := range loose {
			if err := read(p); err != nil {
				return nil, err
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.rules.yaml files below %s, nor *.yaml files in it", dir)
	}
	files.Sort()
	return files, nil
}
