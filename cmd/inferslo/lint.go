package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"time"

	"github.com/inferslo/inferslo/compiler/httpconfig"
	"github.com/inferslo/inferslo/compiler/lint"
	"github.com/inferslo/inferslo/compiler/scrape"
	"github.com/inferslo/inferslo/spec"
)

type lintCmd struct {
	Paths          []string      `arg:"" name:"path" help:"Rule files, PrometheusRule objects, ruler files, Grafana dashboards, KEDA ScaledObjects, Argo AnalysisTemplates and specs, or folders of them (recognised by content; other files are skipped)."`
	Format         string        `help:"Output format: text, json, github or sarif." enum:"text,json,github,sarif" default:"text"`
	FailOn         string        `name:"fail-on" help:"Exit 1 on findings at or above this severity: error or warning; skipped also exits 1 on errors and on any file lint did not read." enum:"error,warning,skipped" default:"error"`
	Metrics        string        `help:"A /metrics scrape (file or http(s) URL, Prometheus text or OpenMetrics) to check every selector against." placeholder:"FILE|URL"`
	HTTPConfig     string        `name:"http-config" help:"Prometheus' HTTP client configuration (authorization, basic_auth, tls_config, oauth2, proxy_url, http_headers) for a --metrics URL." placeholder:"FILE"`
	ScrapeInterval time.Duration `name:"scrape-interval" help:"Scrape interval of the engines; burn-rate windows need four of them." default:"30s"`
	Config         string        `help:"Lint configuration (default: .inferslo.yaml in the current folder when it exists); see docs/lint.md." placeholder:"FILE"`
	Prometheus     int           `help:"Prometheus major version the rules run on: 2 keeps le=\"1\" as exposed, 3 stores le=\"1.0\" (default: the config's, else 3)." enum:"0,2,3" default:"0"`
	Ruler          string        `help:"Rule evaluator the rule files are for: prometheus, thanos, mimir, cortex or vmalert; the group keys it adds are accepted, and vmalert's MetricsQL (default: the config's, else prometheus)." enum:",prometheus,thanos,mimir,cortex,vmalert" default:""`
	Verbose        bool          `short:"v" hidden:"" help:"Kept for scripts: skipped files are always listed, as lint/skipped info findings."`
	Catalogs       catalogFlag   `embed:""`
}

func (c *lintCmd) Run(e *env) error {
	// A run is short and its garbage is parse trees: collecting a quarter
	// as often costs 20 MB and saves a third of the CPU on real rule files.
	debug.SetGCPercent(400)
	cfg, err := c.config()
	if err != nil {
		return err
	}
	files, err := spec.ReadFiles(c.Paths...)
	if err != nil {
		return err
	}
	sources := make([]lint.Source, 0, len(files))
	for _, f := range files {
		if cfg.Lints(f.Name) {
			sources = append(sources, lint.Source{Name: f.Name, Data: f.Data})
		}
	}
	if len(files) > 0 && len(sources) == 0 {
		// A configuration must not turn lint off for the files it is given
		// (a pre-commit hook passes them by name).
		return fmt.Errorf("every one of the %d files given is excluded by the include/exclude globs of %s: nothing was linted; fix the globs or lint other files", len(files), c.configName())
	}
	cat, err := spec.Catalog(c.Catalogs.Catalog...)
	if err != nil {
		return err
	}
	opts := lint.Options{ScrapeInterval: c.ScrapeInterval, Config: cfg, Catalog: cat}
	if c.Metrics != "" {
		client, err := httpconfig.Client(c.HTTPConfig, 0)
		if err != nil {
			return err
		}
		if opts.Scrape, err = scrape.Load(context.Background(), c.Metrics, scrape.Limits{Client: client}); err != nil {
			return err
		}
	}
	res, err := lint.Run(sources, opts)
	if err != nil {
		return err
	}
	if err := lint.Write(e.stdout, c.Format, res); err != nil {
		return err
	}
	if res.Fails(c.FailOn) {
		return errReported
	}
	return nil
}

// configName is the lint configuration's file name.
func (c *lintCmd) configName() string {
	if c.Config != "" {
		return c.Config
	}
	return lint.ConfigFile
}

// config reads --config, or .inferslo.yaml when there is one, and applies
// --prometheus over it.
func (c *lintCmd) config() (*lint.Config, error) {
	name := c.Config
	name = cmp.Or(name, lint.ConfigFile)
	var cfg *lint.Config
	files, err := spec.ReadFiles(name)
	switch {
	case err == nil:
		if cfg, err = lint.ParseConfig(name, files[0].Data); err != nil {
			return nil, err
		}
	case c.Config == "" && errors.Is(err, fs.ErrNotExist):
		cfg, _ = lint.ParseConfig(name, nil)
	default:
		return nil, fmt.Errorf("lint config: %w", err)
	}
	if c.Prometheus != 0 {
		cfg.Prometheus = c.Prometheus
	}
	if c.Ruler != "" {
		cfg.Ruler = c.Ruler
	}
	return cfg, nil
}
