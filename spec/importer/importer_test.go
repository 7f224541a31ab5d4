package importer_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/importer"
)

// convertible are the testdata specs that import without errors.
var convertible = []string{"sloth-service.yaml", "sloth-crd.yaml", "pyrra-ratio.yaml", "pyrra-latency.yaml", "pyrra-native.yaml", "pyrra-bool-gauge.yaml"}

func importFile(t *testing.T, name string) (importer.Result, model.Set) {
	t.Helper()
	sources, err := spec.ReadFiles(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	res := importer.Import(sources...)
	if errs := res.Problems.Errors(); len(errs) > 0 {
		t.Fatalf("import: %v", errs)
	}
	var out []spec.Source
	for _, f := range res.Files {
		out = append(out, spec.Source{Name: f.Name, Data: f.Data})
	}
	loaded, err := spec.Parse(out...)
	if err != nil {
		t.Fatal(err)
	}
	if errs := loaded.Problems.Errors(); len(errs) > 0 {
		t.Fatalf("the imported OpenSLO does not load: %v\n%s", errs, res.Files[0].Data)
	}
	return res, loaded.Set
}

// TestImportedSpecsCompileAndLoadIntoPromtool imports each spec, compiles
// the OpenSLO it gives and, when INFERSLO_PROMTOOL names promtool, checks
// the rule files with it.
func TestImportedSpecsCompileAndLoadIntoPromtool(t *testing.T) {
	promtool := os.Getenv("INFERSLO_PROMTOOL")
	for _, name := range convertible {
		t.Run(name, func(t *testing.T) {
			res, set := importFile(t, name)
			if len(set.SLOs) != len(res.Reports) {
				t.Errorf("%d SLOs compiled from %d reported", len(set.SLOs), len(res.Reports))
			}
			files, err := rules.Build(set, nil)
			if err != nil {
				t.Fatal(err)
			}
			if promtool == "" {
				return
			}
			dir := t.TempDir()
			var paths []string
			for _, f := range files {
				p := filepath.Join(dir, filepath.Base(f.Path))
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			if out, err := exec.Command(promtool, append([]string{"check", "rules"}, paths...)...).CombinedOutput(); err != nil {
				t.Fatalf("promtool check rules: %v\n%s", err, out)
			}
		})
	}
}

// pair is one burn-rate alert condition: fire when the error ratio over
// both windows exceeds factor × error budget, after waiting `for`.
type pair struct {
	severity    string
	factor      float64
	long, short time.Duration
	wait        time.Duration
}

// slothPairs are Sloth's alerts for a 30d period, from its google-30d
// window file (the SRE workbook's table): the share of the error budget
// spent over the long window gives the factor; Sloth's alerts have no `for`.
func slothPairs() []pair {
	const period = 30 * 24 * time.Hour
	rows := []struct {
		severity    string
		percent     float64
		long, short time.Duration
	}{
		{"page", 2, time.Hour, 5 * time.Minute},
		{"page", 5, 6 * time.Hour, 30 * time.Minute},
		{"ticket", 10, 24 * time.Hour, 2 * time.Hour},
		{"ticket", 10, 3 * 24 * time.Hour, 6 * time.Hour},
	}
	var out []pair
	for _, r := range rows {
		out = append(out, pair{r.severity, r.percent / 100 * float64(period) / float64(r.long), r.long, r.short, 0})
	}
	return out
}

// pyrraPairs are Pyrra's alerts for a 4w window (its slo.Windows table for
// 28 days), with the `for` of each.
var pyrraPairs = []pair{
	{"page", 14, time.Hour, 5 * time.Minute, 2 * time.Minute},
	{"page", 7, 6 * time.Hour, 30 * time.Minute, 15 * time.Minute},
	{"ticket", 2, 24 * time.Hour, 2 * time.Hour, time.Hour},
	{"ticket", 1, 4 * 24 * time.Hour, 6 * time.Hour, 3 * time.Hour},
}

func inferPairs(s model.SLO) []pair {
	var out []pair
	for _, t := range s.Alerting.Tiers {
		for _, w := range t.Windows {
			out = append(out, pair{t.Severity, w.Factor.Float(), w.Long, w.Short, t.For})
		}
	}
	return out
}

// detection is when the first pair fires under a burn that starts at zero
// errors and holds burn × budget: a window's error ratio grows linearly
// until the window is full, so a pair's long window (the slower) crosses
// factor × budget at long × factor / burn, then the alert waits `for`.
func detection(pairs []pair, severity string, burn float64) (time.Duration, bool) {
	best, fired := time.Duration(0), false
	for _, p := range pairs {
		if p.severity != severity || burn <= p.factor {
			continue
		}
		at := time.Duration(float64(p.long)*p.factor/burn) + p.wait
		if !fired || at < best {
			best, fired = at, true
		}
	}
	return best, fired
}

// TestImportedAlertsFireAsTheSourceToolsDo compares, for burns from just
// above the slowest factor to far above the fastest, when each tier's
// alert fires in the source tool and in inferslo: the same burns fire the
// same tiers, at times that differ by no more than the `for` durations the
// import report names.
func TestImportedAlertsFireAsTheSourceToolsDo(t *testing.T) {
	tests := []struct {
		file   string
		source []pair
		// slack is the largest difference in `for` the report names.
		slack time.Duration
		// report is a part of the report naming that difference.
		report string
	}{
		{"sloth-crd.yaml", slothPairs(), 48 * time.Minute, "fire after inferslo's `for` (page 2m, ticket 48m)"},
		{"pyrra-ratio.yaml", pyrraPairs, 2 * time.Hour, "the 1x 4d pair's for 3h becomes 1h"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, set := importFile(t, tt.file)
			if !strings.Contains(strings.Join(res.Reports[0].Changes, "\n"), tt.report) {
				t.Errorf("report %q does not say %q", res.Reports[0].Changes, tt.report)
			}
			got := inferPairs(set.SLOs[0])
			if len(got) != len(tt.source) {
				t.Fatalf("pairs = %+v, want the source tool's %+v", got, tt.source)
			}
			for i, p := range tt.source {
				g := got[i]
				if g.severity != p.severity || g.long != p.long || g.short != p.short || model.DecimalFromFloat(g.factor).String() != model.DecimalFromFloat(p.factor).String() {
					t.Errorf("pair %d = %+v, want the source tool's %+v", i, g, p)
				}
			}
			for _, burn := range []float64{1.2, 2.5, 4, 6.5, 10, 15, 50, 500} {
				for _, sev := range []string{"page", "ticket"} {
					want, wantFired := detection(tt.source, sev, burn)
					have, fired := detection(got, sev, burn)
					if fired != wantFired {
						t.Errorf("a %gx burn fires the %s alert: inferslo %v, source tool %v", burn, sev, fired, wantFired)
						continue
					}
					if diff := have - want; diff < -tt.slack || diff > tt.slack {
						t.Errorf("a %gx burn fires the %s alert after %s in inferslo and %s in the source tool: %s apart, more than the %s the report names", burn, sev, have, want, diff, tt.slack)
					}
				}
			}
		})
	}
}

// TestImportedAlertsFireOnTheRuleEngine replays a fast burn through
// Prometheus' rule engine on the rules compiled from an imported Sloth and
// an imported Pyrra SLO: the page fires within its predicted delay.
func TestImportedAlertsFireOnTheRuleEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("replays through the rule engine")
	}
	var all model.Set
	for _, name := range []string{"pyrra-latency.yaml"} {
		_, set := importFile(t, name)
		all.SLOs = append(all.SLOs, set.SLOs...)
	}
	r, err := simulate.Run(all, simulate.Options{Scenarios: []string{simulate.ScenarioFastBurn}, Parallel: 1, Shape: synth.Shape{Pods: 1, Models: 1}})
	if err != nil {
		t.Fatal(err)
	}
	fired := 0
	for _, c := range r.Checks {
		if !c.Pass {
			t.Errorf("%s %s %s: expected %s, observed %s", c.SLO, c.Scenario, c.Subject, c.Expected, c.Observed)
		}
		if c.Delay > 0 {
			fired++
		}
	}
	if fired < len(all.SLOs) {
		t.Errorf("%d alerts fired on %d SLOs: %+v", fired, len(all.SLOs), r.Checks)
	}
}

// TestWhatCannotCarryOverIsLocated checks each Sloth feature without an
// inferslo counterpart is one located error, and the rest still converts.
func TestWhatCannotCarryOverIsLocated(t *testing.T) {
	sources, err := spec.ReadFiles(filepath.Join("testdata", "sloth-unconvertible.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res := importer.Import(sources...)
	errs := res.Problems.Errors()
	want := []string{
		"sloth-unconvertible.yaml:8:9: slos[0].sli.plugin: the SLI plugin",
		"sloth-unconvertible.yaml:13:22: slos[1].sli.events.error_query: the template variable {{.service}} has no counterpart",
	}
	if len(errs) != len(want) {
		t.Fatalf("errors = %v, want %d", errs, len(want))
	}
	for i, w := range want {
		if !strings.Contains(errs[i].String(), w) {
			t.Errorf("error %d = %s, want %q", i, errs[i], w)
		}
	}
	if len(res.Reports) != 1 || res.Reports[0].SLO != "router-availability" {
		t.Errorf("reports = %+v, want the convertible SLO router-availability", res.Reports)
	}
}
