package main

import (
	"context"
	"time"

	"github.com/inferslo/inferslo/compiler/lint"
	"github.com/inferslo/inferslo/compiler/scrape"
	"github.com/inferslo/inferslo/spec"
)

type lintCmd struct {
	Paths          []string      `arg:"" name:"path" help:"Rule files, PrometheusRule objects, ruler files, Grafana dashboards, KEDA ScaledObjects and specs, or folders of them (recognised by content)."`
	Format         string        `help:"Output format: text, json, github or sarif." enum:"text,json,github,sarif" default:"text"`
	FailOn         string        `name:"fail-on" help:"Exit 1 on findings at or above this severity: error or warning." enum:"error,warning" default:"error"`
	Metrics        string        `help:"A /metrics scrape (file or http(s) URL, Prometheus text or OpenMetrics) to check every selector against." placeholder:"FILE|URL"`
	ScrapeInterval time.Duration `name:"scrape-interval" help:"Scrape interval of the engines; burn-rate windows need four of them." default:"30s"`
}

func (c *lintCmd) Run(e *env) error {
	files, err := spec.ReadFiles(c.Paths...)
	if err != nil {
		return err
	}
	sources := make([]lint.Source, len(files))
	for i, f := range files {
		sources[i] = lint.Source{Name: f.Name, Data: f.Data}
	}
	opts := lint.Options{ScrapeInterval: c.ScrapeInterval}
	if c.Metrics != "" {
		if opts.Scrape, err = scrape.Load(context.Background(), c.Metrics, scrape.Limits{}); err != nil {
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
	if res.Count(lint.Severity(c.FailOn)) > 0 {
		return errReported
	}
	return nil
}
