package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/inferslo/inferslo/spec"
)

// formatFlag selects the output of validate, compile and plan. With json,
// stdout holds one JSON document even when the run fails (the schemas are
// in docs/schemas), and stderr holds only what the JSON cannot: nothing on
// success, the error line on a failure that is not a spec problem.
type formatFlag struct {
	Format string `help:"Output format: text, or json (one document on stdout; see docs/json.md)." enum:"text,json" default:"text"`
}

func (f formatFlag) json() bool { return f.Format == "json" }

// report is what a JSON document says besides the command's own result:
// the spec problems that text output prints on stderr. A command puts it
// in env so that load and check fill it.
type report struct {
	OK       bool          `json:"ok"`
	Problems []problemJSON `json:"problems"`
	// Warnings is always empty: every warning is a located problem. The
	// field stays for readers of earlier versions.
	Warnings []string `json:"warnings"`
	// Error is a failure that is not a spec problem (an unreadable file,
	// an output folder inferslo did not write).
	Error string `json:"error,omitempty"`
}

// problemJSON is a spec.Problem as the JSON outputs carry it.
type problemJSON struct {
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Path     string `json:"path,omitempty"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

func newReport() *report {
	return &report{Problems: []problemJSON{}, Warnings: []string{}}
}

func (r *report) addProblems(ps spec.Problems) {
	for _, p := range ps {
		r.Problems = append(r.Problems, problemJSON{
			File: p.File, Line: p.Line, Column: p.Column, Path: p.Path,
			Severity: string(p.Severity), Message: p.Message,
		})
	}
}

// finish records how the run ended; a failure that is not a spec problem
// is kept for the document and still returned, so stderr names it too.
func (r *report) finish(err error) {
	r.OK = err == nil
	if err != nil && !errors.Is(err, errReported) {
		r.Error = err.Error()
	}
}

// writeJSON prints one indented JSON document and passes runErr on, so the
// exit code stays that of the run.
func writeJSON(e *env, doc any, runErr error) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	// Messages quote PromQL and durations: keep > and & readable.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	return runErr
}

// printResult prints a run's result on stdout: indented JSON (escaped as
// encoding/json escapes) with --json, its table otherwise.
func printResult(e *env, asJSON bool, r interface{ WriteTable(io.Writer) error }) error {
	if !asJSON {
		return r.WriteTable(e.stdout)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, string(b))
	return nil
}
