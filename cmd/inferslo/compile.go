package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/kube"
	"github.com/inferslo/inferslo/compiler/query"
)

type compileCmd struct {
	Specs     []string      `arg:"" name:"spec" help:"Spec files or folders (*.yaml, *.yml, *.json)."`
	Catalogs  catalogFlag   `embed:""`
	Metrics   metricsFlag   `embed:""`
	Templates templatesFlag `embed:""`
	Output    string        `short:"o" required:"" help:"Output folder; replaced as a whole, atomically."`
	Check     bool          `help:"Write nothing; exit 1 with a diff when the output folder is stale."`
	Tests     bool          `help:"Also write promtool unit tests (prometheus/<service>.test.yaml) for every alert tier."`

	AnalysisTemplates bool    `name:"analysis-templates" help:"Also write an Argo Rollouts AnalysisTemplate per service (argo/<service>.analysistemplate.yaml) that fails a canary when an SLO or group has less of its error budget left than --analysis-fail-below (the query and gate of inferslo budget)."`
	AnalysisFailBelow float64 `name:"analysis-fail-below" default:"10" help:"The AnalysisTemplates' default gate: the percentage of the error budget (0 to 100) below which a canary fails; a Rollout may pass its own as the fail-below argument (a share, 0.1 for 10%)." placeholder:"PCT"`

	Namespace       string            `help:"Namespace of the generated PrometheusRule objects." placeholder:"NS"`
	RuleLabel       map[string]string `help:"Label of the PrometheusRule objects, repeatable (a Prometheus selects rules by label)." placeholder:"KEY=VALUE"`
	ExternalLabels  []string          `name:"external-labels" help:"Names of the external labels your Prometheus servers add (such as cluster,env), repeatable: the Alertmanager inhibit rules mute only alerts with the same values, so one environment never mutes another's (cluster, env, environment and region are always held), and every dashboard splits, joins and names its series by them, for a global view (Thanos Query, Mimir, federation)." placeholder:"NAME,..."`
	PartialResponse string            `name:"thanos-partial-response" help:"Thanos partial_response_strategy of the ruler groups: abort or warn." enum:",abort,warn" default:""`

	Format formatFlag `embed:""`
}

// compileJSON is compile's --format json document
// (docs/schemas/compile.schema.json).
type compileJSON struct {
	*report
	Output string `json:"output"`
	SLOs   int    `json:"slos"`
	// Written tells whether the output folder was replaced: false on
	// failure and with --check.
	Written bool `json:"written"`
	// Files are the files written (with --check, compared), in the order
	// made; the folder's marker file is not among them.
	Files []compiledFile `json:"files"`
	// Stale and Diff are set with --check.
	Stale *bool  `json:"stale,omitempty"`
	Diff  string `json:"diff,omitempty"`
}

type compiledFile struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

func (d *compileJSON) add(f artifact.File) {
	sum := sha256.Sum256(f.Data)
	d.Files = append(d.Files, compiledFile{Path: f.Path, Bytes: len(f.Data), SHA256: hex.EncodeToString(sum[:])})
}

func (c *compileCmd) options() (compiler.Options, error) {
	text, err := c.Templates.load()
	if err != nil {
		return compiler.Options{}, err
	}
	for _, l := range c.ExternalLabels {
		if !query.ValidLabelName(l) {
			return compiler.Options{}, fmt.Errorf("--external-labels: %q is not a label name", l)
		}
	}
	if p := c.AnalysisFailBelow; math.IsNaN(p) || p < 0 || p > 100 {
		return compiler.Options{}, fmt.Errorf("--analysis-fail-below %v: valid is a percentage from 0 to 100", p)
	}
	return compiler.Options{
		Tests:             c.Tests,
		AnalysisTemplates: c.AnalysisTemplates,
		AnalysisFailBelow: c.AnalysisFailBelow / 100,
		Kube:              kube.Options{Namespace: c.Namespace, Labels: c.RuleLabel, PartialResponseStrategy: c.PartialResponse},
		ExternalLabels:    c.ExternalLabels,
		Ruler:             kube.RulerOptions{PartialResponseStrategy: c.PartialResponse},
		Text:              text,
	}, nil
}

func (c *compileCmd) Run(e *env) error {
	if !c.Format.json() {
		return c.run(e, nil)
	}
	e.report = newReport()
	doc := compileJSON{report: e.report, Output: c.Output, Files: []compiledFile{}}
	err := c.run(e, &doc)
	e.report.finish(err)
	return writeJSON(e, doc, err)
}

// run compiles, or checks with --check; doc, when set, collects the JSON
// document instead of the lines printed on success.
func (c *compileCmd) run(e *env, doc *compileJSON) error {
	opts, err := c.options()
	if err != nil {
		return err
	}
	if c.Check {
		return c.check(e, opts, doc)
	}
	// The stage is made with the first artifact, so that problems of the
	// specs are reported before any of the output folder.
	var st *artifact.Stage
	var stageErr error
	res, err := check(e, c.Specs, c.Catalogs, c.Metrics, opts, func(f artifact.File) error {
		if st == nil {
			if st, stageErr = artifact.NewStage(c.Output, c.recorded()); stageErr != nil {
				return stageErr
			}
		}
		if doc != nil {
			doc.add(f)
		}
		return st.Add(f)
	})
	if doc != nil {
		doc.SLOs = len(res.Set.SLOs)
	}
	if stageErr != nil {
		// A problem of the output folder, not of the artifact being built.
		return stageErr
	}
	if err != nil {
		if st != nil {
			st.Abort()
		}
		return err
	}
	if st == nil {
		return fmt.Errorf("no artifact to write to %s", c.Output)
	}
	if err := st.Commit(); err != nil {
		return err
	}
	if doc != nil {
		doc.Written = true
		return nil
	}
	fmt.Fprintf(e.stderr, "wrote %d files for %d SLOs to %s\n", st.Len(), len(res.Set.SLOs), c.Output)
	return nil
}

// check compares the artifacts with the output folder one at a time,
// keeping only the differences.
func (c *compileCmd) check(e *env, opts compiler.Options, doc *compileJSON) error {
	cmp, err := artifact.NewComparison(c.Output, c.recorded())
	if err != nil {
		return err
	}
	add := cmp.Add
	if doc != nil {
		add = func(f artifact.File) error {
			doc.add(f)
			return cmp.Add(f)
		}
	}
	res, err := check(e, c.Specs, c.Catalogs, c.Metrics, opts, add)
	if doc != nil {
		doc.SLOs = len(res.Set.SLOs)
	}
	if err != nil {
		return err
	}
	diff, err := cmp.Diff()
	if err != nil {
		return err
	}
	if doc != nil {
		stale := len(diff) > 0
		doc.Stale, doc.Diff = &stale, string(diff)
		if stale {
			return errReported
		}
		return nil
	}
	if len(diff) > 0 {
		e.stdout.Write(diff)
		fmt.Fprintf(e.stderr, "%s is stale: run `%s` and commit the result\n", c.Output, c.rerun())
		if was := artifact.RecordedCommand(c.Output); was != "" && was != c.recorded() {
			fmt.Fprintf(e.stderr, "note: %s was written by `inferslo %s`; give --check the same flags to compare like with like\n", c.Output, was)
		}
		return errReported
	}
	fmt.Fprintf(e.stderr, "%s is up to date (%d files)\n", c.Output, cmp.Len())
	return nil
}

// rerun is the command line that rewrites the output folder with the same
// flags as this check, so the hint can be pasted as it is.
func (c *compileCmd) rerun() string {
	args := append([]string{"inferslo", "compile"}, c.Specs...)
	args = append(args, "-o", c.Output)
	return quoteAll(append(args, c.flags()...))
}

// recorded is the command and the flags that shape the output, as the
// output folder's marker records them: "compile --tests --namespace mon".
func (c *compileCmd) recorded() string {
	return quoteAll(append([]string{"compile"}, c.flags()...))
}

// flags lists the flags that shape the output, in a fixed order.
func (c *compileCmd) flags() []string {
	var args []string
	if c.Tests {
		args = append(args, "--tests")
	}
	if c.AnalysisTemplates {
		args = append(args, "--analysis-templates", "--analysis-fail-below", strconv.FormatFloat(c.AnalysisFailBelow, 'f', -1, 64))
	}
	if c.Namespace != "" {
		args = append(args, "--namespace", c.Namespace)
	}
	keys := make([]string, 0, len(c.RuleLabel))
	for k := range c.RuleLabel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--rule-label", k+"="+c.RuleLabel[k])
	}
	if len(c.ExternalLabels) > 0 {
		args = append(args, "--external-labels", strings.Join(c.ExternalLabels, ","))
	}
	if c.PartialResponse != "" {
		args = append(args, "--thanos-partial-response", c.PartialResponse)
	}
	if c.Templates.Templates != "" {
		args = append(args, "--templates", c.Templates.Templates)
	}
	return args
}

// quoteAll joins words quoted for a POSIX shell.
func quoteAll(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// shellQuote leaves words a POSIX shell reads as they are and single-quotes
// the rest.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
