package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/inferslo/inferslo/compiler/httpconfig"
	"github.com/inferslo/inferslo/compiler/lint"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/scrape"
	"github.com/inferslo/inferslo/compiler/simulate"
	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/engine"
	"github.com/inferslo/inferslo/templates"
)

// catalogFlag adds engine catalog files to the built-in catalog.
type catalogFlag struct {
	Catalog []string `help:"Engine catalog file declaring your own engines' metrics (the format of spec/engine/catalog.yaml), repeatable." type:"existingfile" placeholder:"FILE"`
}

// budgetFlag bounds the simulation of a run.
type budgetFlag struct {
	Budget int64 `help:"Rule evaluations and scrapes the simulation may replay per SLO (about a millisecond of CPU each); an SLO needing more is refused, naming the interval that would do." default:"25000" placeholder:"N"`
}

// check refuses a budget outside what a run may be given; none given
// (a command made in code) is the default.
func (f budgetFlag) check() (spec.Check, error) {
	budget := f.Budget
	budget = cmp.Or(budget, simulate.DefaultBudget)
	if budget < 1 || budget > simulate.MaxBudget {
		return nil, fmt.Errorf("--budget %d: valid is 1 to %d", budget, simulate.MaxBudget)
	}
	return func(s model.SLO) (path, message string) {
		iv, msg := simulate.CheckBudget(s, budget)
		switch iv {
		case simulate.EvaluationInterval:
			return "metadata.annotations." + spec.AnnotationEvaluation, msg
		case simulate.ScrapeInterval:
			return "metadata.annotations." + spec.AnnotationScrapeInterval, msg
		}
		return "", ""
	}, nil
}

// templatesFlag replaces the built-in wording of alert annotations.
type templatesFlag struct {
	Templates string `help:"Folder of templates (alert-burn-summary.tmpl, ...) that replace the built-in wording of alert annotations; see docs/templates.md." placeholder:"DIR"`
}

// load reads and validates the templates, the built-in ones for those the
// folder does not replace.
func (f templatesFlag) load() (*templates.Text, error) { return templates.Load(f.Templates) }

// metricsFlag names /metrics scrapes every series an SLO reads is checked
// against.
type metricsFlag struct {
	Metrics    []string `help:"A /metrics scrape (file or http(s) URL, Prometheus text or OpenMetrics, bounded in time and size) every series the rules, dashboards and KEDA triggers read is checked against; repeatable, one per engine." placeholder:"FILE|URL"`
	HTTPConfig string   `name:"http-config" help:"Prometheus' HTTP client configuration (authorization, basic_auth, tls_config, oauth2, proxy_url, http_headers such as X-Scope-OrgID) for --metrics URLs." placeholder:"FILE"`
}

// checker reads the scrapes; nil when none is given.
func (f metricsFlag) checker(cat *engine.Catalog) (spec.Checker, error) {
	if len(f.Metrics) == 0 {
		return nil, nil
	}
	c := &lint.SpecChecker{Catalog: cat}
	client, err := httpconfig.Client(f.HTTPConfig, 0)
	if err != nil {
		return nil, err
	}
	for _, src := range f.Metrics {
		s, err := scrape.Load(context.Background(), src, scrape.Limits{Client: client})
		if err != nil {
			return nil, err
		}
		c.Scrapes = append(c.Scrapes, s)
	}
	return c.Check, nil
}

// load reads specs and prints every problem with its snippet. It returns
// errReported when any problem is an error.
func load(e *env, paths []string, catalogs catalogFlag) (spec.Result, error) {
	return loadScraped(e, paths, catalogs, metricsFlag{})
}

// loadSimulated loads what a simulation replays: the templates, and the
// specs with every SLO whose replay would take longer than the budget
// refused before any runs.
func loadSimulated(e *env, paths []string, catalogs catalogFlag, t templatesFlag, b budgetFlag) (*templates.Text, spec.Result, error) {
	text, err := t.load()
	if err != nil {
		return nil, spec.Result{}, err
	}
	budget, err := b.check()
	if err != nil {
		return nil, spec.Result{}, err
	}
	res, err := loadScraped(e, paths, catalogs, metricsFlag{}, budget.Checker())
	return text, res, err
}

// loadScraped is load that also checks every SLO against the scrapes.
func loadScraped(e *env, paths []string, catalogs catalogFlag, metrics metricsFlag, checkers ...spec.Checker) (spec.Result, error) {
	cat, err := spec.Catalog(catalogs.Catalog...)
	if err != nil {
		return spec.Result{}, err
	}
	sc, err := metrics.checker(cat)
	if err != nil {
		return spec.Result{}, err
	}
	if sc != nil {
		checkers = append(checkers, sc)
	}
	res, err := spec.LoadVerified(cat, checkers, paths...)
	if err != nil {
		return res, err
	}
	if e.report != nil {
		e.report.addProblems(res.Problems)
	} else {
		printProblems(e.stderr, res.Problems)
	}
	if errs := res.Problems.Errors(); len(errs) > 0 {
		if e.report == nil {
			fmt.Fprintf(e.stderr, "%d problem(s) found\n", len(errs))
		}
		return res, errReported
	}
	// Writing zero files would replace existing rules with nothing.
	if len(res.Set.SLOs) == 0 {
		return res, fmt.Errorf("no SLO found in %s (%d spec files read); an output needs at least one objective", strings.Join(paths, " "), len(res.Files))
	}
	return res, nil
}

// printProblems prints each problem with its snippet.
func printProblems(w io.Writer, ps spec.Problems) { io.WriteString(w, ps.Report()) }
