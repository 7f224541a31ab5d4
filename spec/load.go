package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
)

// Result is what loading specs gives: the resolved SLOs when there were no
// errors, and every problem found (warnings included).
type Result struct {
	Set      model.Set
	Problems Problems
	// Files are the spec files read, in order.
	Files []string
}

// Err returns the errors among the problems, or nil.
func (r Result) Err() error {
	if errs := r.Problems.Errors(); len(errs) > 0 {
		return errs
	}
	return nil
}

// Load reads spec files and folders (recursively: *.yaml, *.yml, *.json) and
// resolves them into SLOs. A problem in one file does not stop the others
// from being checked: every problem of the run is reported.
func Load(paths ...string) (Result, error) {
	files, err := Discover(paths...)
	if err != nil {
		return Result{}, err
	}
	sources := make([]Source, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return Result{}, fmt.Errorf("read spec: %w", err)
		}
		sources[i] = Source{Name: f, Data: data}
	}
	return Parse(sources...)
}

// Source is one spec file's name and content.
type Source struct {
	Name string
	Data []byte
}

// Parse resolves specs held in memory, as Load does for files.
func Parse(sources ...Source) (Result, error) {
	cat, err := engine.Load()
	if err != nil {
		return Result{}, err
	}
	l := newLoader(cat)
	var names []string
	for _, s := range sources {
		l.addFile(s.Name, s.Data)
		names = append(names, s.Name)
	}
	set := l.resolve()
	l.problems.sort()
	return Result{Set: set, Problems: l.problems.dedupe(), Files: names}, nil
}

// Discover expands folders into the spec files below them, sorted.
func Discover(paths ...string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("no spec files or folders given")
	}
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.ToSlash(filepath.Clean(p))
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("spec path: %w", err)
		}
		if !info.IsDir() {
			add(p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && q != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && isSpecFile(q) {
				found = append(found, q)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read folder %s: %w", p, err)
		}
		sort.Strings(found)
		for _, f := range found {
			add(f)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("folder %s holds no spec files (*.yaml, *.yml, *.json)", p)
		}
	}
	return files, nil
}

func isSpecFile(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// splitDocs parses a file into its objects: every YAML document, and every
// item of a document that is a list.
func splitDocs(file string, data []byte) ([]*doc, Problems) {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*doc
	for i := 0; ; i++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return docs, Problems{yamlProblem(file, lines, err)}
		}
		root := &n
		if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
			root = root.Content[0]
		}
		switch root.Kind {
		case yaml.MappingNode:
			docs = append(docs, &doc{file: file, lines: lines, node: root})
		case yaml.SequenceNode:
			for j, item := range root.Content {
				docs = append(docs, &doc{file: file, lines: lines, node: item, prefix: fmt.Sprintf("[%d]", j)})
			}
		case yaml.ScalarNode:
			if root.Tag == "!!null" {
				continue // empty document, e.g. a trailing ---
			}
			fallthrough
		default:
			d := &doc{file: file, lines: lines, node: root}
			return docs, Problems{d.errorf("", "a spec document must be an object with apiVersion and kind, or a list of them")}
		}
	}
	return docs, nil
}

// yamlProblem locates a YAML syntax error; yaml.v3 puts "line N" in the text.
func yamlProblem(file string, lines []string, err error) Problem {
	p := Problem{File: file, Severity: Error, Message: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	var line int
	if _, scanErr := fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line); scanErr == nil && line > 0 {
		p.Message = "invalid YAML: " + strings.TrimSpace(strings.SplitN(strings.TrimPrefix(err.Error(), "yaml: "), ":", 2)[1])
		// yaml.v3 reports an unclosed flow collection at the line before
		// the one that opens it (its context mark counts from zero).
		if strings.Contains(p.Message, "did not find expected") {
			line++
		}
		p.Line = line
		if line <= len(lines) {
			p.Source = lines[line-1]
		}
	}
	return p
}
