package simulate

import (
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/predict"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/workload"
)

// ScenarioMaintenance is an hour of total failure inside a planned
// maintenance window, and the same hour outside every window.
const ScenarioMaintenance = "maintenance"

// maintenanceReach is how far after the simulation's start a window is
// replayed where the spec puts it; one further away (a weekly window, a
// one-off date) is replayed as a one-off window of its length at the
// start, through the same rules but for the window's recording.
const maintenanceReach = 25 * time.Hour

// withoutMaintenance is the rules with every maintenance window closed:
// the recording reads 0 at every hour, and the joins leave every event in.
func withoutMaintenance(x prom.RuleIndex) prom.RuleIndex {
	return withMaintenanceExpr(x, "vector(0)")
}

// withMaintenanceExpr is the rules with the window recording's expression
// replaced.
func withMaintenanceExpr(x prom.RuleIndex, expr string) prom.RuleIndex {
	return x.Rewritten(func(r rulefmt.Rule) rulefmt.Rule {
		if r.Record == model.MaintenanceActive {
			r.Expr = expr
		}
		return r
	})
}

// maintenance: every request fails for an hour (or the window, if
// shorter) inside the SLO's first maintenance window: no burn alert fires
// and the budget left is what the healthy traffic around it leaves. The
// same hour outside every window pages (raises the ticket of an SLO that
// pages nobody).
func (s *sloSim) maintenance() ([]Check, error) {
	ms := s.slo.Alerting.Maintenance
	if len(ms) == 0 {
		return nil, nil
	}
	eval := s.evalOrDefault()
	base := s.slo.BaseWindow()
	// The window's first opening once the rate windows hold data; a
	// shorter healthy history than the burn scenarios' only makes alerts
	// quicker to fire.
	warm := predict.RoundUp(base+2*eval, eval)
	epoch := prom.Epoch()
	fail := min(time.Hour, ms[0].Length())
	x := s.maintained
	where := ""
	start, ok := ms[0].Next(epoch.Add(warm))
	if !ok || start.Sub(epoch) > maintenanceReach {
		opens := "opened before the replay's start"
		if ok {
			opens = "first opens " + start.UTC().Format(time.RFC3339)
		}
		start = epoch.Add(warm)
		ms = []model.Maintenance{{Start: start, End: start.Add(ms[0].Length())}}
		x = withMaintenanceExpr(x, irules.MaintenanceExpr(ms))
		where = fmt.Sprintf(" (the spec's window %s, more than %s after the replay's start: replayed as a one-off window)", opens, dur(maintenanceReach))
	}
	in := start.Sub(epoch)
	settle := fail + base + s.maxFor() + 2*eval
	// The same hour outside: the first quarter hour after the window
	// whose failure, and the alerts' settling after it, meets no window.
	out := time.Duration(-1)
	for c := predict.RoundUp(in+ms[0].Length()+base+eval, 15*time.Minute); c <= in+maintenanceReach; c += 15 * time.Minute {
		if model.Closed(ms, epoch.Add(c-base), epoch.Add(c+settle)) {
			out = c
			break
		}
	}
	if s.planned != nil {
		*s.planned = max(*s.planned, in+settle+max(out, 0)+settle)
		return nil, nil
	}
	if s.maintained == nil {
		return nil, fmt.Errorf("no rules with the maintenance windows to replay")
	}
	total := 1 / s.budget()
	failing := func(at time.Duration) workload.Traffic {
		return func(t time.Duration) (float64, float64) {
			if t > at && t <= at+fail {
				return 1, total
			}
			return 1, workload.HealthyBurn
		}
	}
	burns := []prom.AlertKey{}
	for _, k := range s.alertsOf() {
		if k.Name == model.AlertBurn {
			burns = append(burns, k)
		}
	}

	// Inside the window.
	fired := map[prom.AlertKey]time.Duration{}
	spent := math.NaN()
	err := s.replayWith(x, failing(in), in+settle, func(t time.Duration, st map[prom.AlertKey]rules.AlertState) bool {
		for _, k := range burns {
			if _, seen := fired[k]; !seen && st[k] == rules.StateFiring {
				fired[k] = t
			}
		}
		return false
	}, func(h *prom.Harness, _ *workload.Driver, t time.Duration) (err error) {
		spent, err = s.budgetSpent(h, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	subject := fmt.Sprintf("a %s total failure at +%s, inside the window%s", dur(fail), dur(in), where)
	var checks []Check
	for _, k := range burns {
		obs, pass := "silent", true
		if t, ok := fired[k]; ok {
			obs, pass = "fired after "+dur(t-in), false
		}
		checks = append(checks, s.check(ScenarioMaintenance, k.String(), "silent: "+subject, obs, pass))
	}
	// Healthy traffic spends HealthyBurn of the budget; the failure,
	// counted, would spend 1/budget times its share of the window more.
	healthy := workload.HealthyBurn
	obs := fmt.Sprintf("%.1f%% of the budget spent (healthy traffic alone: %.1f%%)", 100*spent, 100*healthy)
	if math.IsNaN(spent) {
		obs = "no budget recorded"
	}
	checks = append(checks, s.check(ScenarioMaintenance, model.BudgetRemaining, "spends no budget: "+subject, obs, spent <= healthy*1.1+0.01))

	// Outside every window.
	key := prom.AlertKey{Name: model.AlertBurn, Severity: model.PageTier}
	if _, ok := predict.TierBySeverity(s.slo, model.PageTier); !ok && len(burns) > 0 {
		key = burns[0]
	}
	if out < 0 {
		c := s.check(ScenarioMaintenance, key.String(), "fires: the same failure outside the windows", fmt.Sprintf("not replayed: no hour within %s after the window is clear of every window", dur(maintenanceReach)), true)
		c.NotProven = true
		return append(checks, c), nil
	}
	firedOut := time.Duration(-1)
	spentOut := math.NaN()
	err = s.replayWith(x, failing(out), out+settle, func(t time.Duration, st map[prom.AlertKey]rules.AlertState) bool {
		if firedOut < 0 && st[key] == rules.StateFiring {
			firedOut = t
		}
		return false
	}, func(h *prom.Harness, _ *workload.Driver, t time.Duration) error {
		spentOut, err = s.budgetSpent(h, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	expected := fmt.Sprintf("fires: the same failure at +%s, outside every window", dur(out))
	if firedOut < 0 {
		return append(checks, s.check(ScenarioMaintenance, key.String(), expected, fmt.Sprintf("did not fire within %s", dur(settle)), false)), nil
	}
	return append(checks, s.check(ScenarioMaintenance, key.String(), expected, fmt.Sprintf("fired after %s; %.1f%% of the budget spent", dur(firedOut-out), 100*spentOut), true)), nil
}

// budgetSpent is the most budget any group of the SLO has spent at t, NaN
// when none is recorded.
func (s *sloSim) budgetSpent(h *prom.Harness, t time.Duration) (float64, error) {
	v, err := h.Query(model.BudgetQuery(s.slo), t)
	if err != nil {
		return math.NaN(), err
	}
	spent := math.NaN()
	for i, smp := range v {
		if i == 0 || 1-smp.F > spent {
			spent = 1 - smp.F
		}
	}
	return spent, nil
}

// replayWith replays a timeline from zero through other rules than the
// SLO's own (its maintenance windows as written), in a Prometheus of its
// own.
func (s *sloSim) replayWith(x prom.RuleIndex, load workload.Traffic, end time.Duration,
	each func(t time.Duration, st map[prom.AlertKey]rules.AlertState) bool, after func(*prom.Harness, *workload.Driver, time.Duration) error) error {
	m := &sloSim{slo: s.slo, rules: x, opts: s.opts}
	err := m.replay(load, nil, end, each, after)
	s.simulated += m.simulated
	return err
}
