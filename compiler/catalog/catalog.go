// Package catalog writes the SLO catalog: one JSON document listing every
// compiled SLO with the queries and dashboard that serve it, so a service
// catalog or portal (Backstage, an internal wiki) reads the SLOs without
// parsing rule files or specs.
package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/grafana"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/prometheus/prometheus/promql/parser"
)

// Path is where the catalog goes in the output folder.
const Path = "catalog/slos.json"

// Catalog is the document: every SLO, in the compilation's order.
type Catalog struct {
	SLOs []Entry `json:"slos"`
}

// Entry is one SLO: what it promises and where to read it.
type Entry struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	Service     string `json:"service"`
	// SLI is the inference role (ttft, errors, ...), or ratio or threshold.
	SLI       string `json:"sli"`
	Objective string `json:"objective"` // "99.9%"
	Window    string `json:"window"`    // "28d", or a calendar period such as "calendar month (UTC)"
	Tier      string `json:"tier,omitempty"`
	Engine    string `json:"engine,omitempty"`
	// Threshold is a latency SLI's threshold in seconds.
	Threshold string   `json:"threshold,omitempty"`
	GroupBy   []string `json:"groupBy,omitempty"`
	// Source is the spec file the SLO comes from.
	Source  string  `json:"source"`
	Queries Queries `json:"queries"`
	// Dashboard is the service dashboard's file in the output folder.
	Dashboard string `json:"dashboard"`
}

// Queries are PromQL a portal can run against the Prometheus that
// evaluates the generated rules.
type Queries struct {
	// BudgetRemaining is the share of the error budget left over the SLO
	// window (negative when overspent).
	BudgetRemaining string `json:"budgetRemaining"`
	// ErrorRatio is the bad share of events over the SLO window.
	ErrorRatio string `json:"errorRatio"`
	// BurnRate is the burn rate over the base window: 1 spends the budget
	// exactly over the SLO window.
	BurnRate string `json:"burnRate"`
	// Alerts lists the SLO's firing and pending alerts.
	Alerts string `json:"alerts"`
}

// Backend is the catalog backend of a compilation.
type Backend struct{}

// Name says what the backend builds.
func (Backend) Name() string { return "slo catalog" }

// PerService: the catalog lists every SLO.
func (Backend) PerService() bool { return false }

// Build is the package's Build.
func (Backend) Build(set model.Set) (artifact.Set, error) { return Build(set) }

// Build returns the catalog of set, every query checked to parse; nothing
// for an empty set.
func Build(set model.Set) (artifact.Set, error) {
	if len(set.SLOs) == 0 {
		return nil, nil
	}
	c := Catalog{SLOs: make([]Entry, 0, len(set.SLOs))}
	// Every SLO's queries have the same few shapes: each parses once.
	p := query.NewShapeParser()
	for _, slo := range set.SLOs {
		e, err := entryOf(p, slo)
		if err != nil {
			return nil, fmt.Errorf("slo %s: %w", slo.Name, err)
		}
		c.SLOs = append(c.SLOs, e)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encode the catalog: %w", err)
	}
	// The catalog is held until the services' artifacts are written: a
	// copy of its length, not the buffer grown to write it.
	return artifact.Set{{Path: Path, Data: bytes.Clone(buf.Bytes())}}, nil
}

func entryOf(p parser.Parser, slo model.SLO) (Entry, error) {
	e := Entry{
		Name:        slo.Name,
		DisplayName: slo.DisplayName,
		Service:     slo.Service.Name,
		SLI:         model.SLIName(slo),
		Objective:   slo.Objective.Percent(),
		Window:      slo.WindowText(),
		Tier:        slo.SLOTier,
		GroupBy:     slo.GroupBy,
		Source:      slo.Source,
		Dashboard:   grafana.ServicePath(slo.Service.Name),
		Queries: Queries{
			BudgetRemaining: model.Selector(model.BudgetRemaining, slo, 0),
			ErrorRatio:      model.SelectorAt(model.ErrorRatio, slo, slo.WindowLabel()),
			BurnRate:        model.BurnRate(slo, slo.BaseWindow()),
			Alerts:          "ALERTS{" + model.LabelSLO + "=" + strconv.Quote(slo.Name) + "}",
		},
	}
	if inf := slo.Inference; inf != nil {
		e.Engine = inf.Engine
		if !inf.Threshold.IsZero() {
			e.Threshold = inf.Threshold.String()
		}
	}
	for _, q := range []string{e.Queries.BudgetRemaining, e.Queries.ErrorRatio, e.Queries.BurnRate, e.Queries.Alerts} {
		if _, err := p.ParseExpr(q); err != nil {
			return Entry{}, fmt.Errorf("query %s: %w", q, err)
		}
	}
	return e, nil
}
