package review

import (
	"fmt"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/render"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate"
	"github.com/inferslo/inferslo/compiler/simulate/autoscale"
)

// rampSLOs are the SLOs whose load ramp the page shows: TTFT SLOs with the
// queue-backlog warning and autoscaling capacity facts, as `inferslo test`
// replays them.
func rampSLOs(set model.Set) []model.SLO {
	var out []model.SLO
	for _, slo := range set.SLOs {
		if inf := slo.Inference; inf != nil && inf.Role == "ttft" && slo.Alerting.Backlog != nil &&
			slo.Autoscaling != nil && slo.Autoscaling.Capacity.MeanServiceTime > 0 {
			out = append(out, slo)
		}
	}
	return out
}

// addRamps replays each ramp SLO's load ramp over the compiled rules and
// adds it to the page; an SLO the ramp cannot replay is listed as skipped.
func addRamps(page *render.Review, set model.Set, files artifact.Set, scratch string) (skipped []string, err error) {
	for _, slo := range rampSLOs(set) {
		r, why, err := simulate.RunRamp(slo, files, scratch)
		if err != nil {
			return skipped, fmt.Errorf("load ramp of %s: %w", slo.Name, err)
		}
		if why != "" {
			skipped = append(skipped, fmt.Sprintf("%s: load ramp not replayed: %s", slo.Name, why))
			continue
		}
		if err := page.AddSection(rampSection(slo, r)); err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

// rampSection draws a ramp: the load against what the serving replicas
// can take, the replicas, the queue per replica against the warning's
// threshold and the TTFT quantile against the SLO's, with the warning and
// the page as bands and each trigger's first ask as a marker.
func rampSection(slo model.SLO, r simulate.Ramp) render.Section {
	at := func(d time.Duration) time.Time { return r.Epoch.Add(d) }
	var load, capacity, replicas, ready, queue, ttft []render.Point
	for _, st := range r.Steps {
		t := at(st.T)
		load = append(load, render.Point{Time: t, Value: st.Load[0]})
		capacity = append(capacity, render.Point{Time: t, Value: float64(st.Ready[0]) * r.PerReplica})
		replicas = append(replicas, render.Point{Time: t, Value: float64(st.Replicas[0])})
		ready = append(ready, render.Point{Time: t, Value: float64(st.Ready[0])})
		queue = append(queue, render.Point{Time: t, Value: st.Queue[0]})
		ttft = append(ttft, render.Point{Time: t, Value: st.TTFT[0]})
	}
	// An overloaded fleet's queue and TTFT grow by orders of magnitude:
	// the axes stop at four times the lines they are read against.
	zero := 0.0
	queueMax, ttftMax := 4*slo.Alerting.Backlog.PerReplica.Float(), 4*slo.Inference.Threshold.Float()
	q := strings.TrimSuffix(slo.Objective.Percent(), "%")
	charts := []render.Chart{
		{Title: "Load and serving capacity", Unit: "reqps", Min: &zero,
			Description: "Requests per second arriving, and the serving replicas × slots / mean service time.",
			Series:      []render.Series{{Name: "arrivals", Points: load}, {Name: "serving capacity", Points: capacity}}},
		{Title: "Replicas", Min: &zero,
			Description: "The count the HPA set from the generated ScaledObject's triggers, and those serving (a replica takes a minute to start).",
			Series:      []render.Series{{Name: "replicas (HPA)", Points: replicas}, {Name: "serving", Points: ready}}},
		{Title: "Queue per replica", Min: &zero, Max: &queueMax,
			Description: fmt.Sprintf("Waiting requests per serving replica; %s fires above %s.", irules.AlertBacklog, slo.Alerting.Backlog.PerReplica),
			Series:      []render.Series{{Name: "waiting per replica", Points: queue}},
			Thresholds:  []render.Threshold{{Value: slo.Alerting.Backlog.PerReplica.Float(), Color: "orange"}}},
		{Title: "TTFT p" + q, Unit: "s", Min: &zero, Max: &ttftMax,
			Description: fmt.Sprintf("The TTFT p%s of each scrape's requests, against the SLO's threshold.", q),
			Series:      []render.Series{{Name: "TTFT p" + q, Points: ttft}},
			Thresholds:  []render.Threshold{{Value: slo.Inference.Threshold.Float(), Color: "red"}}},
	}
	var alerts []render.Alert
	band := func(name, severity string, on func(autoscale.FleetStep) bool) {
		var cur *render.Alert
		for _, st := range r.Steps {
			switch {
			case on(st) && cur == nil:
				cur = &render.Alert{Name: name, Severity: severity, SLO: slo.Name, Service: slo.Service.Name, From: at(st.T), To: at(st.T)}
			case on(st):
				cur.To = at(st.T)
			case cur != nil:
				cur.To = at(st.T)
				alerts = append(alerts, *cur)
				cur = nil
			}
		}
		if cur != nil {
			alerts = append(alerts, *cur)
		}
	}
	band(irules.AlertBacklog, model.TicketTier, func(st autoscale.FleetStep) bool { return st.Backlog[0] })
	band(model.AlertBurn, model.PageTier, func(st autoscale.FleetStep) bool { return st.Paging[0] })
	for _, a := range r.Asks {
		alerts = append(alerts, render.Alert{Name: fmt.Sprintf("KEDA trigger %s first asks for %d replicas", a.Trigger, a.Replicas),
			Severity: render.MarkerSeverity, SLO: slo.Name, Service: slo.Service.Name, From: at(a.T), To: at(a.T)})
	}
	var note []string
	for _, c := range r.Checks {
		switch {
		case c.Subject == irules.AlertBacklog && c.Lead != 0, strings.HasPrefix(c.Subject, model.AlertBurn):
			note = append(note, fmt.Sprintf("%s %s.", c.Subject, c.Observed))
		case c.Subject == "replicas" && strings.HasPrefix(c.Expected, "never"):
			note = append(note, fmt.Sprintf("Replica reversals: %s.", c.Observed))
		}
	}
	var asks []string
	for _, a := range r.Asks {
		asks = append(asks, fmt.Sprintf("%s at +%s (%d replicas)", a.Trigger, model.FormatDuration((a.T-r.Start).Round(time.Second)), a.Replicas))
	}
	if len(asks) > 0 {
		note = append(note, "KEDA triggers first asked for more replicas: "+strings.Join(asks, ", ")+".")
	}
	from, to := at(r.Steps[0].T), at(r.Steps[len(r.Steps)-1].T)
	return render.Section{
		ID:    "ramp-" + slo.Name,
		Title: "Load ramp: " + slo.Name,
		Note: fmt.Sprintf("The generated ScaledObject drives a simulated fleet while the load climbs past what maxReplicas serve; times count from the climb's start at %s. ",
			at(r.Start).UTC().Format("15:04")) + strings.Join(note, " "),
		Charts: charts, Alerts: alerts, From: from, To: to,
	}
}
