package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/inferslo/inferslo/compiler/safetext"
	"github.com/inferslo/inferslo/spec/input"

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
	cat, err := engine.Load()
	if err != nil {
		return Result{}, err
	}
	return LoadWith(cat, paths...)
}

// Catalog is the built-in engine catalog with the engines of catalog
// files added; an engine id defined twice is an error.
func Catalog(files ...string) (*engine.Catalog, error) {
	cat, err := engine.Load()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := input.ReadInput("engine catalog", "", f, MaxFileSize)
		if err != nil {
			return nil, err
		}
		more, err := engine.Parse(data, f)
		if err != nil {
			return nil, err
		}
		if err := cat.Merge(more); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return cat, nil
}

// LoadWith is Load with a given engine catalog.
func LoadWith(cat *engine.Catalog, paths ...string) (Result, error) {
	sources, err := ReadFiles(paths...)
	if err != nil {
		return Result{}, err
	}
	return ParseWith(cat, sources...)
}

// Check is a further check of each resolved SLO that a command makes
// (`inferslo test` refuses SLOs whose replay would take hours): it returns
// the OpenSLO property path at fault and what is wrong, or an empty path
// when the SLO passes. Its problems are located like spec's own, at the
// shorthand's property for shorthand specs.
type Check func(model.SLO) (path, message string)

// Checker is a further check of each resolved SLO that may find several
// problems (validate --metrics compares every series an SLO reads with
// a scrape). Each problem names an OpenSLO property path of the SLO's
// object, its message and severity (a warning keeps the SLO); the loader
// locates it like Check's.
type Checker func(model.SLO) []Problem

// Checker adapts a Check.
func (c Check) Checker() Checker {
	return func(s model.SLO) []Problem {
		if path, msg := c(s); path != "" {
			return []Problem{{Path: path, Message: msg, Severity: Error}}
		}
		return nil
	}
}

// LoadVerified is LoadWith that also runs checkers on every SLO that
// resolves.
func LoadVerified(cat *engine.Catalog, checkers []Checker, paths ...string) (Result, error) {
	sources, err := ReadFiles(paths...)
	if err != nil {
		return Result{}, err
	}
	return parse(cat, checkers, sources)
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
	return ParseWith(cat, sources...)
}

// ParseWith is Parse with a given engine catalog.
func ParseWith(cat *engine.Catalog, sources ...Source) (Result, error) {
	return parse(cat, nil, sources)
}

func parse(cat *engine.Catalog, checks []Checker, sources []Source) (Result, error) {
	l := newLoader(cat)
	l.checks = checks
	// Files are split into documents on every core, then added in order.
	type split struct {
		docs []*doc
		ps   Problems
	}
	splits := make([]split, len(sources))
	eachIndex(len(sources), func(i int) {
		splits[i].docs, splits[i].ps = splitDocs(sources[i].Name, sources[i].Data)
	})
	var names []string
	for i, s := range sources {
		l.addDocs(splits[i].docs, splits[i].ps)
		splits[i] = split{}
		names = append(names, s.Name)
	}
	set := l.resolve()
	l.problems.sort()
	return Result{Set: set, Problems: l.problems.dedupe(), Files: names}, nil
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
			return docs, Problems{yamlProblem(file, data, err)}
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
			// No snippet: a file that is not an object may be no spec at
			// all (a token, a key), and its text must not reach the output.
			d := &doc{file: file, node: root}
			return docs, Problems{d.errorf("", "a spec document must be an object with apiVersion and kind, or a list of them")}
		}
	}
	return docs, nil
}

// yamlProblem locates a YAML syntax error; yaml.v3 puts "line N" in the text.
// It shows no line of the file and no quoted text from it: a file that is
// not YAML may be a secret that only its name made look like a spec.
func yamlProblem(file string, data []byte, err error) Problem {
	p := Problem{File: file, Severity: Error, Message: "invalid YAML: " + safetext.HideQuoted(strings.TrimPrefix(err.Error(), "yaml: "))}
	var line int
	if _, scanErr := fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line); scanErr == nil && line > 0 {
		p.Message = "invalid YAML: " + safetext.HideQuoted(strings.TrimSpace(strings.SplitN(strings.TrimPrefix(err.Error(), "yaml: "), ":", 2)[1]))
		// yaml.v3 reports an unclosed flow collection at the line before
		// the one that opens it (its context mark counts from zero).
		if strings.Contains(p.Message, "did not find expected") {
			line++
		}
		p.Line = line
	}
	if p.Line == 0 {
		// Errors of encoding carry no line: the first byte that is not
		// UTF-8 has one, and otherwise the file as a whole is at fault.
		p.Line = 1
		if i := invalidUTF8(data); i >= 0 {
			p.Line += bytes.Count(data[:i], []byte("\n"))
		}
	}
	return p
}

// invalidUTF8 is the offset of the first byte of data that is not UTF-8,
// or -1.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}
