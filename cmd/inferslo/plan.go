package main

import (
	"encoding/json"
	"fmt"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
)

type planCmd struct {
	Specs    []string    `arg:"" name:"spec" help:"Spec files or folders."`
	Catalogs catalogFlag `embed:""`
	Format   formatFlag  `embed:""`
}

// planJSON is plan's --format json document (docs/schemas/plan.schema.json).
type planJSON struct {
	*report
	Plans []servicePlan `json:"plans"`
}

// servicePlan is one service's plan. Quantities are exact decimals, as the
// text prints them.
type servicePlan struct {
	Service         string      `json:"service"`
	SLO             string      `json:"slo"`
	PeakRPS         json.Number `json:"peakRPS"`
	MeanServiceTime json.Number `json:"meanServiceTimeSeconds"`
	TTFTTarget      json.Number `json:"ttftTargetSeconds"`
	Slots           json.Number `json:"slotsPerReplica"`
	SlotsMeasured   bool        `json:"slotsMeasured"`
	Concurrency     json.Number `json:"concurrency"`
	Replicas        int         `json:"replicas"`
	QueuePerReplica json.Number `json:"queuePerReplica"`
	// Explanation is the text output of the plan: the arithmetic.
	Explanation string `json:"explanation"`
}

func number(d model.Decimal) json.Number { return json.Number(d.String()) }

func (c *planCmd) Run(e *env) error {
	if !c.Format.json() {
		plans, err := c.plans(e)
		if err != nil {
			return err
		}
		for i, p := range plans {
			if i > 0 {
				fmt.Fprintln(e.stdout)
			}
			fmt.Fprint(e.stdout, p.Explain())
		}
		return nil
	}
	e.report = newReport()
	doc := planJSON{report: e.report, Plans: []servicePlan{}}
	plans, err := c.plans(e)
	for _, p := range plans {
		doc.Plans = append(doc.Plans, servicePlan{
			Service: p.Service, SLO: p.SLO,
			PeakRPS: number(p.PeakRPS), MeanServiceTime: number(p.ServiceTime), TTFTTarget: number(p.Target),
			Slots: number(p.Slots), SlotsMeasured: p.SlotsMeasured, Concurrency: number(p.Concurrency),
			Replicas: p.Replicas, QueuePerReplica: number(p.QueuePerReplica), Explanation: p.Explain(),
		})
	}
	e.report.finish(err)
	return writeJSON(e, doc, err)
}

// plans loads the specs and plans every service with capacity facts; no
// such service is a problem.
func (c *planCmd) plans(e *env) ([]capacity.Result, error) {
	res, err := load(e, c.Specs, c.Catalogs)
	if err != nil {
		return nil, err
	}
	plans, err := capacity.Plans(res.Set)
	if err != nil {
		return nil, err
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("no service has capacity facts (spec.autoscaling.capacity: peakRPS and meanServiceTime)")
	}
	return plans, nil
}
