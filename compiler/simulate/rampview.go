package simulate

import (
	"math"
	"strings"
	"time"

	irules "github.com/inferslo/inferslo/compiler/rules"

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
	Steps []FleetStep
	// Triggers are the generated ScaledObject's.
	Triggers []Trigger
	// PerReplica is the requests per second a replica serves at full use.
	PerReplica float64
	// Checks are the ramp's checks, as `inferslo test` reports them.
	Checks []Check
	// Asks are each trigger's first ask for more replicas after Start.
	Asks []Ask
}

// RunRamp replays the load ramp of a TTFT SLO with the queue-backlog
// warning and capacity facts over the compiled rule files; false when the
// SLO has no ramp (the reason is in the second result).
func RunRamp(slo model.SLO, files artifact.Set, scratch string) (Ramp, string, error) {
	if slo.Alerting.Backlog == nil {
		return Ramp{}, "no queue-backlog warning", nil
	}
	r, why, err := newRampRun(slo, rampViewHold)
	if err != nil || why != "" {
		return Ramp{}, why, err
	}
	var ruleFiles artifact.Set
	for _, f := range files {
		if strings.HasPrefix(f.Path, "prometheus/") && strings.HasSuffix(f.Path, ".rules.yaml") {
			ruleFiles = append(ruleFiles, f)
		}
	}
	x, err := indexRules(ruleFiles)
	if err != nil {
		return Ramp{}, "", err
	}
	// The SLO's own group: the rest of the service adds evaluations only.
	x = x.selected(func(name string) bool { return name == irules.GroupName(slo) })
	steps, err := runFleet(x, FleetOptions{SLO: slo, Fleets: []Fleet{r.fleet}, End: r.end, Warmup: r.warm, Scratch: scratch})
	if err != nil {
		return Ramp{}, "", err
	}
	// The view starts a few minutes before the climb.
	from := 0
	for from < len(steps) && steps[from].T < r.start-5*time.Minute {
		from++
	}
	s := &sloSim{slo: slo}
	out := Ramp{Epoch: epoch(), Start: r.start, Steps: steps[from:], Triggers: r.scaler.Triggers, PerReplica: r.perReplica,
		Checks: rampChecks(s, steps, r.scaler, r.start, r.from, r.to)}
	out.Asks = firstAsks(steps, r.scaler, r.start)
	return out, "", nil
}

// firstAsks are each trigger's first ask for more replicas after start.
func firstAsks(steps []FleetStep, scaler Autoscaler, start time.Duration) []Ask {
	var out []Ask
	for j, tr := range scaler.Triggers {
		for i := 1; i < len(steps); i++ {
			st, cur := steps[i], steps[i-1].Replicas[0]
			if v := st.Values[0][j]; st.T > start && !math.IsNaN(v) && propose(tr, v, cur) > cur {
				out = append(out, Ask{Trigger: tr.Name, T: st.T, Replicas: propose(tr, v, cur), Value: v, step: i})
				break
			}
		}
	}
	return out
}

// Ask is when a KEDA trigger first asked for more replicas in a ramp.
type Ask struct {
	Trigger  string
	T        time.Duration
	Replicas int
	// Value is what the trigger read.
	Value float64
	step  int
}

// scrapeQuantile is quantile q of the observations one scrape added to a
// cumulative histogram (bounds ascending, +Inf last), interpolated within
// its bucket as histogram_quantile does; the highest finite bound when it
// falls in +Inf, NaN without observations.
func scrapeQuantile(q float64, bounds, before, after []float64) float64 {
	n := len(bounds)
	if n == 0 || after[n-1]-before[n-1] <= 0 {
		return math.NaN()
	}
	rank := q * (after[n-1] - before[n-1])
	lower, below := 0.0, 0.0
	for i, b := range bounds {
		c := after[i] - before[i]
		if c >= rank {
			if math.IsInf(b, 1) {
				return lower
			}
			if c == below {
				return b
			}
			return lower + (b-lower)*(rank-below)/(c-below)
		}
		lower, below = b, c
	}
	return lower
}
