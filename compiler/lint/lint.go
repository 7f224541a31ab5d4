// Package lint checks PromQL where teams keep it — Prometheus rule files,
// PrometheusRule objects, Thanos and Mimir ruler files, Grafana dashboards,
// KEDA ScaledObjects — and inferslo specs, with what inferslo knows about
// inference engines and SLO arithmetic. Every finding has a stable check id,
// a severity and a location inside the file, the PromQL position mapped back
// to the YAML or JSON line and column.
package lint

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/engine"
)

// Severity of a finding, from most to least serious: the spec's.
type Severity = spec.Severity

const (
	Error   = spec.Error
	Warning = spec.Warning
	Info    = spec.Info
)

// Finding is one located problem and the check that found it. Line 0
// means the whole file; Source is the line's text, for the caret.
type Finding struct {
	Check string
	spec.Problem
}

// MarshalJSON writes the documented fields in their documented order:
// check, severity, file, line, column, message.
func (f Finding) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Check    string   `json:"check"`
		Severity Severity `json:"severity"`
		File     string   `json:"file"`
		Line     int      `json:"line"`
		Column   int      `json:"column"`
		Message  string   `json:"message"`
	}{f.Check, f.Severity, f.File, f.Line, f.Column, f.Message})
}

// String prints the problem and the check that found it.
func (f Finding) String() string { return f.Problem.String() + " (" + f.Check + ")" }

// Source is one input file.
type Source struct {
	Name string
	Data []byte
}

// Options tune the checks.
type Options struct {
	// ScrapeInterval is the interval the engines are scraped at; burn-rate
	// windows shorter than four of them see too few samples.
	ScrapeInterval time.Duration
	// Scrape, when set, is a real /metrics exposition every selector is
	// checked against.
	Scrape *Scrape
	// Config is the .inferslo.yaml lint section (Prometheus version,
	// disabled checks, severities); nil means the defaults.
	Config *Config
	// Catalog is the engine catalog (the built-in one when nil), with the
	// engines --catalog files declare.
	Catalog *engine.Catalog
}

// Result is every finding of a run, sorted by file and line.
type Result struct {
	Findings []Finding
	// Files is how many files were linted; Skipped lists the others.
	Files   int
	Skipped []Skip
}

// Skip is a file lint did not recognise, and why.
type Skip struct {
	File, Reason string
}

// Count returns how many findings are at least as serious as level.
func (r Result) Count(level Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity.AtLeast(level) {
			n++
		}
	}
	return n
}

// Fails says whether the result fails a run at a --fail-on level: error,
// warning, or skipped (errors, and any file lint did not read).
func (r Result) Fails(level string) bool {
	if level == FailOnSkipped {
		return r.Count(Error) > 0 || len(r.Skipped) > 0
	}
	return r.Count(Severity(level)) > 0
}

// FailOnSkipped is the --fail-on level that also fails on skipped files.
const FailOnSkipped = "skipped"

// Run lints the sources together: a dashboard may read a recording rule
// defined in another file of the set.
func Run(sources []Source, opts Options) (Result, error) {
	if opts.ScrapeInterval <= 0 {
		opts.ScrapeInterval = 30 * time.Second
	}
	cat := opts.Catalog
	if cat == nil {
		var err error
		if cat, err = engine.Load(); err != nil {
			return Result{}, err
		}
	}
	p := &pass{opts: opts, catalog: newCatalog(cat), recorded: map[string]bool{}, recordedExpr: map[string]parser.Expr{}, rateLikeOf: map[string]bool{}, templates: map[string]error{}}
	for _, s := range sources {
		p.files = append(p.files, readFile(p, s))
	}
	p.specs(cat, sources)
	for _, f := range p.files {
		for _, r := range f.rules {
			if r.Record != "" {
				p.recorded[r.Record] = true
				if r.Query != nil && r.Query.Expr != nil {
					p.recordedExpr[r.Record] = r.Query.Expr
				}
			}
		}
	}
	for _, c := range Checks() {
		for _, f := range p.files {
			for _, q := range f.queries {
				if q.Expr != nil && c.Query != nil {
					c.Query(p.with(c), q)
				}
			}
			for _, r := range f.rules {
				if c.Rule != nil {
					c.Rule(p.with(c), r)
				}
			}
		}
	}
	out := opts.Config.apply(p.suppress(p.findings))
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Check, b.Check))
	})
	// A finding in an anchored node is reported once, not once per alias.
	out = slices.CompactFunc(out, func(a, b Finding) bool { return a == b })
	res := Result{Findings: out}
	for _, f := range p.files {
		if f.Skipped != "" && f.Kind == "" {
			res.Skipped = append(res.Skipped, Skip{File: f.Name, Reason: f.Skipped})
			// Every format says so: a hook that passes must not hide a rule
			// file it never read.
			res.Findings = append(res.Findings, Finding{Check: checkSkipped.ID, Problem: spec.Problem{
				Severity: checkSkipped.Severity, File: f.Name, Message: "not linted: " + f.Skipped}})
		} else {
			res.Files++
		}
	}
	return res, nil
}

// specFacts are the checks whose facts a spec may change (declared
// buckets, a pinned engine version, its scrape interval).
var specFacts = map[string]bool{"engine/le-not-a-bucket": true, "engine/renamed-metric": true, "slo/window-too-short": true}

// pass is the state of one run; reporter binds it to the check reporting.
type pass struct {
	opts     Options
	catalog  *catalog
	files    []*File
	recorded map[string]bool
	// recordedExpr is each recording rule's expression, so a query over a
	// recording is understood as what it records.
	recordedExpr map[string]parser.Expr
	// rateLikeOf caches recordedRateLike by recording.
	rateLikeOf map[string]bool
	findings   []Finding
	// templates caches template checks by text.
	templates map[string]error
}

// reporter reports findings for one check.
type reporter struct {
	*pass
	check Check
}

func (p *pass) with(c Check) *reporter { return &reporter{pass: p, check: c} }

// at reports a finding at a file position.
func (r *reporter) at(f *File, line, col int, format string, args ...any) {
	fd := Finding{Check: r.check.ID, Problem: spec.Problem{
		Severity: r.check.Severity, File: f.Name,
		Line: line, Column: col, Message: fmt.Sprintf(format, args...),
	}}
	if f.generated && specFacts[r.check.ID] {
		// inferslo's output takes buckets, names and windows from the
		// specs it was compiled from, which lint checks only when they are
		// linted too (a pre-commit run staging only the regenerated output
		// lints none).
		fd.Severity = Info
		fd.Message += "; the file is inferslo's output, whose specs declare its buckets, engine version and scrape interval: lint them beside it to check"
	}
	if f.Kind != "" {
		// Only files lint recognised are quoted: another file's line may be
		// a secret.
		fd.Source = f.line(line)
	}
	r.findings = append(r.findings, fd)
}
