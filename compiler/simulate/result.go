package simulate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// Scenario names, as they appear in results.
const (
	ScenarioHealthy     = "healthy"
	ScenarioFastBurn    = "fast burn"
	ScenarioSlowBurn    = "slow burn"
	ScenarioZeroTraffic = "zero traffic"
	ScenarioReset       = "counter reset"
	ScenarioDayNight    = "day/night"
	ScenarioOutage      = "outage"
	ScenarioRamp        = "load ramp"
)

// Check is one pass/fail assertion: one SLO, one scenario, one alert (or
// one recorded series).
type Check struct {
	SLO      string `json:"slo"`
	Service  string `json:"service"`
	Scenario string `json:"scenario"`
	// Subject is the alert (`ErrorBudgetBurn{severity="page"}`) or the
	// recorded series the check is about.
	Subject  string `json:"subject"`
	Expected string `json:"expected"`
	Observed string `json:"observed"`
	Pass     bool   `json:"pass"`
	// NotProven marks a check the simulator could not run (a raw-ratio SLI
	// has no event counts to synthesize): it fails nothing, but proves
	// nothing either, and `test --strict` refuses it.
	NotProven bool `json:"not_proven,omitempty"`
	// Predicted is the workbook's upper bound on the alert delay, Delay the
	// observed delay from the start of the burn; Resolved is how long the
	// alert kept firing after the burn stopped, ResolveBound its bound.
	Predicted    time.Duration `json:"-"`
	Delay        time.Duration `json:"-"`
	Resolved     time.Duration `json:"-"`
	ResolveBound time.Duration `json:"-"`
	// Lead is how long an early warning fired before the page.
	Lead time.Duration `json:"-"`
}

// MarshalJSON writes durations the way rule files do ("4m40s").
func (c Check) MarshalJSON() ([]byte, error) {
	type plain Check
	out := struct {
		plain
		Predicted    string `json:"predicted,omitempty"`
		Delay        string `json:"delay,omitempty"`
		Resolved     string `json:"resolved,omitempty"`
		ResolveBound string `json:"resolve_bound,omitempty"`
		Lead         string `json:"lead,omitempty"`
	}{plain: plain(c)}
	out.Lead = dur(c.Lead)
	out.Predicted = dur(c.Predicted)
	out.Delay = dur(c.Delay)
	out.Resolved = dur(c.Resolved)
	out.ResolveBound = dur(c.ResolveBound)
	return json.Marshal(out)
}

func dur(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return model.FormatDuration(d.Round(time.Second))
}

// Result is every check of a simulation run, in SLO then scenario order.
type Result struct {
	Checks []Check `json:"checks"`
	// Autoscaling are the trace replays of the autoscaled SLOs.
	Autoscaling []Autoscaling `json:"autoscaling"`
	// Simulated is the simulated time replayed, summed over SLOs (history
	// scenarios share is counted once), Elapsed the wall time the run took.
	Simulated time.Duration `json:"-"`
	Elapsed   time.Duration `json:"-"`
}

// OK tells whether every check passed.
func (r Result) OK() bool { return len(r.Failures()) == 0 }

// Failures returns the failed checks.
func (r Result) Failures() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.Pass {
			out = append(out, c)
		}
	}
	return out
}

// Unproven returns the checks the simulator could not run.
func (r Result) Unproven() []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.NotProven {
			out = append(out, c)
		}
	}
	return out
}

// MarshalJSON adds the pass flag and durations as text.
func (r Result) MarshalJSON() ([]byte, error) {
	checks := r.Checks
	if checks == nil {
		checks = []Check{}
	}
	replays := r.Autoscaling
	if replays == nil {
		replays = []Autoscaling{}
	}
	return json.Marshal(struct {
		Pass        bool          `json:"pass"`
		Unproven    int           `json:"not_proven"`
		Checks      []Check       `json:"checks"`
		Autoscaling []Autoscaling `json:"autoscaling"`
		Simulated   string        `json:"simulated"`
	}{r.OK(), len(r.Unproven()), checks, replays, model.FormatDuration(r.Simulated.Round(time.Minute))})
}

// WriteTable renders the checks as an aligned table, then one line per
// failure naming SLO, alert and scenario.
func (r Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SLO\tSCENARIO\tSUBJECT\tEXPECTED\tOBSERVED\tRESULT")
	for _, c := range r.Checks {
		res := "ok"
		switch {
		case !c.Pass:
			res = "FAIL"
		case c.NotProven:
			res = "NOT PROVEN"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.SLO, c.Scenario, c.Subject, c.Expected, c.Observed, res)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fails := r.Failures()
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d checks, %d failed", len(r.Checks), len(fails))
	if n := len(r.Unproven()); n > 0 {
		fmt.Fprintf(&b, ", %d not proven", n)
	}
	fmt.Fprintf(&b, "; %s simulated in %s\n", model.FormatDuration(r.Simulated.Round(time.Minute)), r.Elapsed.Round(time.Millisecond))
	for _, c := range r.Unproven() {
		fmt.Fprintf(&b, "NOT PROVEN: SLO %s: %s\n", c.SLO, c.Observed)
	}
	for _, c := range fails {
		fmt.Fprintf(&b, "FAIL: SLO %s, scenario %q: %s expected %s, observed %s\n", c.SLO, c.Scenario, c.Subject, c.Expected, c.Observed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Error summarizes the failures, or is nil when all checks pass; a CLI
// returns it to exit non-zero.
func (r Result) Error() error {
	fails := r.Failures()
	if len(fails) == 0 {
		return nil
	}
	msgs := make([]string, len(fails))
	for i, c := range fails {
		msgs[i] = fmt.Sprintf("SLO %s, scenario %q: %s expected %s, observed %s", c.SLO, c.Scenario, c.Subject, c.Expected, c.Observed)
	}
	return fmt.Errorf("%d of %d simulation checks failed: %s", len(fails), len(r.Checks), strings.Join(msgs, "; "))
}

// observeFire records when an alert fired (fired < 0: it did not by the
// deadline) after a burn that started at warm, against c.Predicted.
func (c *Check) observeFire(fired, warm, deadline time.Duration) {
	if fired < 0 {
		c.Observed = fmt.Sprintf("did not fire within %s", dur(deadline-warm))
		return
	}
	c.Delay = fired - warm
	c.Pass = c.Delay <= c.Predicted
	c.Observed = "fired after " + dur(c.Delay)
}
