package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/ruler"
)

// ConfigFile is the name lint looks for in the current folder.
const ConfigFile = ".inferslo.yaml"

// Config is the lint section of .inferslo.yaml:
//
//	lint:
//	  prometheus: 2            # major version: 2 keeps le="1", 3 (default) needs le="1.0"
//	  disable: [alert/missing-severity]
//	  severity: {engine/unknown-metric: error}
//	  include: ["rules/**", "dashboards/*.json"]
//	  exclude: ["**/templates/**"]
//	  ruler: thanos            # prometheus (default), thanos, mimir or cortex
type Config struct {
	Prometheus int                 `yaml:"prometheus"`
	Disable    []string            `yaml:"disable"`
	Severity   map[string]Severity `yaml:"severity"`
	Include    []string            `yaml:"include"`
	Exclude    []string            `yaml:"exclude"`
	// Ruler is the rule evaluator the rule files are for (prometheus,
	// thanos, mimir, cortex): the group keys it adds are accepted.
	Ruler string `yaml:"ruler"`

	include, exclude []*regexp.Regexp
}

// ParseConfig reads a config file's lint section, refusing unknown keys,
// check ids and severities with the file's line.
func ParseConfig(name string, data []byte) (*Config, error) {
	var doc struct {
		Lint Config `yaml:"lint"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &doc.Lint
	switch c.Prometheus {
	case 0:
		c.Prometheus = 3
	case 2, 3:
	default:
		return nil, fmt.Errorf("%s: lint.prometheus: %d is not a Prometheus major version; write 2 or 3", name, c.Prometheus)
	}
	if c.Ruler != "" {
		if _, err := ruler.Lookup(c.Ruler); err != nil {
			return nil, fmt.Errorf("%s: lint.ruler: %w", name, err)
		}
	}
	known := map[string]bool{}
	for _, ch := range Checks() {
		known[ch.ID] = true
	}
	for _, id := range c.Disable {
		if !known[id] {
			return nil, fmt.Errorf("%s: lint.disable: unknown check %q (docs/lint.md lists them)", name, id)
		}
	}
	for id, s := range c.Severity {
		if !known[id] {
			return nil, fmt.Errorf("%s: lint.severity: unknown check %q (docs/lint.md lists them)", name, id)
		}
		if s != Error && s != Warning && s != Info {
			return nil, fmt.Errorf("%s: lint.severity.%s: %q is not error, warning or info", name, id, s)
		}
	}
	for _, globs := range []struct {
		key string
		in  []string
		out *[]*regexp.Regexp
	}{{"include", c.Include, &c.include}, {"exclude", c.Exclude, &c.exclude}} {
		if len(globs.in) > maxGlobs {
			return nil, fmt.Errorf("%s: lint.%s: %d globs, more than the %d allowed", name, globs.key, len(globs.in), maxGlobs)
		}
		for i, g := range globs.in {
			if len(g) > maxGlob {
				return nil, fmt.Errorf("%s: lint.%s[%d]: a glob of %d bytes, longer than the %d allowed", name, globs.key, i, len(g), maxGlob)
			}
			*globs.out = append(*globs.out, globRegexp(g))
		}
	}
	return c, nil
}

// maxGlob and maxGlobs bound the include and exclude globs: each becomes
// a regular expression, and paths are many.
const (
	maxGlob  = 1024
	maxGlobs = 1000
)

// Lints says whether a file (a slash-separated path) is in the lint set:
// it matches an include glob (or there are none) and no exclude glob.
func (c *Config) Lints(path string) bool {
	if c == nil {
		return true
	}
	path = strings.TrimPrefix(path, "./")
	in := len(c.include) == 0
	for _, re := range c.include {
		in = in || re.MatchString(path)
	}
	for _, re := range c.exclude {
		if re.MatchString(path) {
			return false
		}
	}
	return in
}

// globRegexp turns a glob into a regexp: ** crosses folders, * and ? do not.
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; {
		case c == '*' && i+1 < len(glob) && glob[i+1] == '*':
			i++
			if i+1 < len(glob) && glob[i+1] == '/' {
				i++
				b.WriteString("(?:.*/)?")
			} else {
				b.WriteString(".*")
			}
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// apply drops disabled checks' findings and sets configured severities.
func (c *Config) apply(in []Finding) []Finding {
	if c == nil || len(c.Disable) == 0 && len(c.Severity) == 0 {
		return in
	}
	off := map[string]bool{}
	for _, id := range c.Disable {
		off[id] = true
	}
	out := in[:0]
	for _, f := range in {
		if off[f.Check] {
			continue
		}
		if s, ok := c.Severity[f.Check]; ok {
			f.Severity = s
		}
		out = append(out, f)
	}
	return out
}
