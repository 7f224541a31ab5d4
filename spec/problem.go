// Package spec turns spec files into resolved SLOs: it decodes OpenSLO v1 and
// the inference shorthand with line numbers, expands the shorthand into
// OpenSLO, resolves references across files and validates everything,
// reporting each problem with its file, line and property path.
package spec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/inferslo/inferslo/compiler/safetext"
)

// Severity of a problem: errors stop compilation, warnings do not, and
// notes (lint's info) only inform.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// rank orders severities, most serious highest.
func (s Severity) rank() int {
	switch s {
	case Error:
		return 3
	case Warning:
		return 2
	}
	return 1
}

// AtLeast says whether s is as serious as level.
func (s Severity) AtLeast(level Severity) bool { return s.rank() >= level.rank() }

// Problem is one located finding: in a spec, or (embedded in a lint
// finding) in a rule file, dashboard or ScaledObject.
type Problem struct {
	File     string
	Line     int    // 1-based; 0 when unknown
	Column   int    // 1-based; 0 when unknown
	Path     string // property path inside the object, e.g. spec.objectives[0].target
	Message  string
	Severity Severity
	// Source is the offending line's text, for a caret under the column.
	Source string
}

// String prints `file:line:col: path: message`.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, ":%d", p.Column)
		}
	}
	b.WriteString(": ")
	if p.Severity == Warning {
		b.WriteString("warning: ")
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// maxSnippet is the longest source line a snippet shows whole.
const maxSnippet = 200

// Snippet prints the offending line with a caret under the column, the way
// compilers and pint show where a problem is.
func (p Problem) Snippet() string {
	if p.Source == "" || p.Line == 0 {
		return ""
	}
	num := fmt.Sprintf("%d", p.Line)
	pad := strings.Repeat(" ", len(num))
	// A one-line JSON spec is one source line: each problem shows a
	// window of it around its column, as lint does.
	src, col := p.Source, max(p.Column, 1)
	if len(src) > maxSnippet {
		src, col = safetext.Window(src, col)
	}
	return fmt.Sprintf("%s | %s\n%s | %s^\n", num, src, pad, strings.Repeat(" ", col-1))
}

// Problems is every problem of a run, reported together.
type Problems []Problem

// Report is every problem with its snippet, as validate prints them.
func (ps Problems) Report() string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String() + "\n")
		b.WriteString(p.Snippet())
	}
	return b.String()
}

// Errors returns only the problems that stop compilation.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if p.Severity != Warning {
			out = append(out, p)
		}
	}
	return out
}

// Error lists every problem, one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

func (ps Problems) sort() {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// dedupe drops repeats of a problem: an object shared by several SLOs (a
// Service, an AlertCondition) is checked once per SLO but reported once.
func (ps Problems) dedupe() Problems {
	seen := map[Problem]bool{}
	out := ps[:0:0]
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
