package spec_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docFiles are the README and every page under docs/, relative to the
// repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no pages under docs/")
	}
	return append([]string{"../README.md"}, pages...)
}

var fence = regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```")

// prose is a page without its fenced code blocks, where links are not links.
func prose(page string) string { return fence.ReplaceAllString(page, "") }

var heading = regexp.MustCompile(`(?m)^#+ (.+)$`)

// anchor is the fragment GitHub gives a heading: lower case, punctuation
// other than hyphens dropped, spaces turned into hyphens.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// brokenLinks lists the relative links of a page (at path, holding text)
// that name no file, or a heading its page does not have.
func brokenLinks(path, text string) []string {
	var broken []string
	for _, m := range link.FindAllStringSubmatch(prose(text), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, frag, _ := strings.Cut(target, "#")
		resolved := path
		if file != "" {
			resolved = filepath.Join(filepath.Dir(path), file)
		}
		data, err := os.ReadFile(resolved)
		if err != nil {
			if _, statErr := os.Stat(resolved); statErr != nil {
				broken = append(broken, fmt.Sprintf("%s: %s names no file", path, target))
			}
			continue
		}
		if frag == "" || !strings.HasSuffix(resolved, ".md") {
			continue
		}
		found := false
		for _, h := range heading.FindAllStringSubmatch(prose(string(data)), -1) {
			if anchor(h[1]) == frag {
				found = true
				break
			}
		}
		if !found {
			broken = append(broken, fmt.Sprintf("%s: %s names no heading of %s", path, target, resolved))
		}
	}
	return broken
}

func TestEveryRelativeLinkOfTheDocsResolves(t *testing.T) {
	for _, path := range docFiles(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range brokenLinks(path, string(data)) {
			t.Error(b)
		}
	}
}

func TestTheLinkCheckFindsADeadLink(t *testing.T) {
	cases := []struct {
		name, text string
		broken     int
	}{
		{"a link to a page that exists passes", "[cli](docs/cli.md)", 0},
		{"a link to a heading that exists passes", "[install](docs/cli.md#install)", 0},
		{"a link to a missing page fails", "[gone](docs/autoscaling.md)", 1},
		{"a link to a missing heading fails", "[gone](docs/cli.md#no-such-heading)", 1},
		{"a link inside a code block is not a link", "```\n[gone](docs/autoscaling.md)\n```", 0},
		{"a web address is not checked", "[web](https://example.com/x.md)", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := brokenLinks("../README.md", c.text); len(got) != c.broken {
				t.Errorf("got %d broken links %q, want %d", len(got), got, c.broken)
			}
		})
	}
}

// The README's first screen gives the two commands, and CI runs the test
// command it gives.
func TestTheReadmeGivesTheCommandsCIRuns(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	first := strings.Join(lines[:min(len(lines), 25)], "\n")
	for _, cmd := range []string{"go run ./cmd/inferslo compile examples -o out", "go test ./..."} {
		if !strings.Contains(first, cmd) {
			t.Errorf("the README's first 25 lines do not give %q", cmd)
		}
	}
	if len(lines) > 150 {
		t.Errorf("the README has %d lines; it is the front door, the rest belongs under docs/", len(lines))
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^go test \./\.\.\.$`).Match(ci) {
		t.Error(".ci/run does not run the README's test command, go test ./...")
	}
}

// packagesOf lists the folders below root (relative, with slashes) that
// hold a Go package: a .go file that is not a test. Hidden folders,
// testdata and other modules (a go.mod of their own) are not this
// module's.
func packagesOf(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
			return filepath.SkipDir
		}
		files, err := filepath.Glob(filepath.Join(p, "*.go"))
		if err != nil {
			return err
		}
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				out = append(out, filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTheArchitecturePageNamesEveryPackage(t *testing.T) {
	page, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := packagesOf(t, "..")
	if len(pkgs) < 20 {
		t.Fatalf("found %d packages; the walk is broken", len(pkgs))
	}
	for _, p := range pkgs {
		if p == "." {
			continue
		}
		if !strings.Contains(string(page), "`"+p+"`") {
			t.Errorf("docs/architecture.md does not name package %s", p)
		}
	}
}
