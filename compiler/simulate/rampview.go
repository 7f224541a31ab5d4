package simulate

import (
	"strings"
	"time"

	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/autoscale"
	"github.com/inferslo/inferslo/compiler/simulate/prom"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
)

// rampViewHold is how long the review page's ramp holds the peak: long
// enough to show the page, shorter than the proof's hold.
const rampViewHold = 10 * time.Minute

// Ramp is an SLO's load ramp as the review page draws it.
type Ramp struct {
	// Epoch is the simulation's time zero; step times count from it.
	Epoch time.Time
	// Start is when the climb starts; Steps begin at the end of the warmup.
	Start time.Duration
	Steps []autoscale.FleetStep
	// Triggers are the generated ScaledObject's.
	Triggers []autoscale.Trigger
	// PerReplica is the requests per second a replica serves at full use.
	PerReplica float64
	// Checks are the ramp's checks, as `inferslo test` reports them.
	Checks []Check
	// Asks are each trigger's first ask for more replicas after Start.
	Asks []autoscale.Ask
}

// RunRamp replays the load ramp of a TTFT SLO with the queue-backlog
// warning and capacity facts over the compiled rule files; false when the
// SLO has no ramp (the reason is in the second result).
func RunRamp(slo model.SLO, files artifact.Set, scratch string) (Ramp, string, error) {
	if slo.Alerting.Backlog == nil {
		return Ramp{}, "no queue-backlog warning", nil
	}
	r, why, err := autoscale.NewRampRun(slo, rampViewHold)
	if err != nil || why != "" {
		return Ramp{}, why, err
	}
	var ruleFiles artifact.Set
	for _, f := range files {
		if strings.HasPrefix(f.Path, "prometheus/") && strings.HasSuffix(f.Path, ".rules.yaml") {
			ruleFiles = append(ruleFiles, f)
		}
	}
	x, err := prom.IndexRules(ruleFiles)
	if err != nil {
		return Ramp{}, "", err
	}
	// The SLO's own group: the rest of the service adds evaluations only.
	x = x.Selected(func(name string) bool { return name == irules.GroupName(slo) })
	steps, err := autoscale.RunIndexed(x, autoscale.FleetOptions{SLO: slo, Fleets: []autoscale.Fleet{r.Fleet}, End: r.End, Warmup: r.Warm, Scratch: scratch})
	if err != nil {
		return Ramp{}, "", err
	}
	// The view starts a few minutes before the climb.
	from := 0
	for from < len(steps) && steps[from].T < r.Start-5*time.Minute {
		from++
	}
	s := &sloSim{slo: slo}
	out := Ramp{Epoch: prom.Epoch(), Start: r.Start, Steps: steps[from:], Triggers: r.Scaler.Triggers, PerReplica: r.PerReplica,
		Checks: rampChecks(s, steps, r.Scaler, r.Start, r.From, r.To)}
	out.Asks = autoscale.FirstAsks(steps, r.Scaler, r.Start)
	return out, "", nil
}
