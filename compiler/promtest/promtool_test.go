package promtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

// runTests runs a test file against its rule file the way `promtool test
// rules` does (cmd/promtool/unittest.go cannot be imported): series loaded
// lazily, every group evaluated at every evaluation_interval from the Unix
// epoch, firing alerts of the tested name compared with labels and
// annotations. It returns one message per failed expectation. Given
// names, it runs only the test groups of those names: a proof that an edit
// fails one group need not replay the file's others.
func runTests(t *testing.T, dir, testPath string, names ...string) []string {
	t.Helper()
	f := readTestFile(t, testPath)
	eval, err := prommodel.ParseDuration(f.EvaluationInterval)
	if err != nil {
		t.Fatal(err)
	}
	var fails []string
	ran := 0
	for _, tg := range f.Tests {
		if len(names) > 0 && !slices.Contains(names, tg.Name) {
			continue
		}
		ran++
		fails = append(fails, runGroup(t, dir, f, tg, time.Duration(eval))...)
	}
	if ran < len(names) {
		t.Fatalf("%s holds %d of the test groups %q", filepath.Base(testPath), ran, names)
	}
	return fails
}

func runGroup(t *testing.T, dir string, f File, tg Test, eval time.Duration) []string {
	var load strings.Builder
	fmt.Fprintf(&load, "load %s\n", tg.Interval)
	for _, s := range tg.InputSeries {
		fmt.Fprintf(&load, "  %s %s\n", s.Series, s.Values)
	}
	// Like promtool, a test with a start_timestamp loads its series and
	// counts its eval_times from there, not from the Unix epoch.
	mint := time.Unix(0, 0).UTC()
	if tg.StartTimestamp != "" {
		start, err := time.Parse(time.RFC3339, tg.StartTimestamp)
		if err != nil {
			t.Fatalf("%s: start_timestamp: %v", tg.Name, err)
		}
		mint = start.UTC()
	}
	suite, err := promqltest.NewLazyLoader(load.String(), promqltest.LazyLoaderOpts{EnableAtModifier: true, EnableNegativeOffset: true, StartTime: mint})
	if err != nil {
		t.Fatalf("%s: %v", tg.Name, err)
	}
	defer suite.Close()
	m := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:  rules.EngineQueryFunc(suite.QueryEngine(), suite.Storage()),
		Appendable: suite.Storage(),
		Context:    context.Background(),
		NotifyFunc: func(context.Context, string, ...*rules.Alert) {},
		Logger:     promslog.NewNopLogger(),
		Parser:     parser.NewParser(parser.Options{}),
	})
	var files []string
	for _, rf := range f.RuleFiles {
		files = append(files, filepath.Join(dir, rf))
	}
	interval, _ := prommodel.ParseDuration(tg.Interval)
	groups, errs := m.LoadGroups(time.Duration(interval), labels.EmptyLabels(), "", nil, false, files...)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", tg.Name, errs)
	}
	var ordered []*rules.Group
	for _, g := range groups {
		ordered = append(ordered, g)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].Name() < ordered[j].Name() })
	var maxt time.Duration
	byTime := map[time.Duration][]AlertTest{}
	for _, a := range tg.Alerts {
		d, err := prommodel.ParseDuration(a.EvalTime)
		if err != nil {
			t.Fatal(err)
		}
		byTime[time.Duration(d)] = append(byTime[time.Duration(d)], a)
		if time.Duration(d) > maxt {
			maxt = time.Duration(d)
		}
	}
	for _, q := range tg.PromQLTests {
		d, err := prommodel.ParseDuration(q.EvalTime)
		if err != nil {
			t.Fatal(err)
		}
		maxt = max(maxt, time.Duration(d))
	}
	var fails []string
	for ts := time.Duration(0); ts <= maxt; ts += eval {
		suite.WithSamplesTill(mint.Add(ts), func(err error) {
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range ordered {
				g.Eval(context.Background(), mint.Add(ts))
			}
		})
		for at, tests := range byTime {
			if at < ts || at >= ts+eval {
				continue
			}
			for _, a := range tests {
				var got []string
				for _, g := range ordered {
					for _, r := range g.Rules() {
						ar, ok := r.(*rules.AlertingRule)
						if !ok || ar.Name() != a.Alertname {
							continue
						}
						for _, al := range ar.ActiveAlerts() {
							if al.State == rules.StateFiring {
								got = append(got, al.Labels.String()+" "+al.Annotations.String())
							}
						}
					}
				}
				var exp []string
				for _, e := range a.ExpAlerts {
					ls := map[string]string{labels.AlertName: a.Alertname}
					for k, v := range e.Labels {
						ls[k] = v
					}
					exp = append(exp, labels.FromMap(ls).String()+" "+labels.FromMap(e.Annotations).String())
				}
				sort.Strings(got)
				sort.Strings(exp)
				if strings.Join(got, "\n") != strings.Join(exp, "\n") {
					fails = append(fails, fmt.Sprintf("%s at %s:\n  expected %q\n  got      %q", tg.Name, a.EvalTime, exp, got))
				}
			}
		}
	}
	// Like promtool, expressions are read once every rule has been
	// evaluated up to the last evaluation time.
	for _, q := range tg.PromQLTests {
		fails = append(fails, exprFaults(t, suite, mint, tg.Name, q)...)
	}
	return fails
}

// exprFaults evaluates an expression test and lists how its samples
// differ from the expected ones.
func exprFaults(t *testing.T, suite *promqltest.LazyLoader, mint time.Time, name string, q PromQLTest) []string {
	t.Helper()
	d, _ := prommodel.ParseDuration(q.EvalTime)
	qry, err := suite.QueryEngine().NewInstantQuery(context.Background(), suite.Queryable(), nil, q.Expr, mint.Add(time.Duration(d)))
	if err != nil {
		t.Fatalf("%s: %s: %v", name, q.Expr, err)
	}
	res := qry.Exec(context.Background())
	if res.Err != nil {
		t.Fatalf("%s: %s: %v", name, q.Expr, res.Err)
	}
	vec, err := res.Vector()
	if err != nil {
		t.Fatalf("%s: %s: %v", name, q.Expr, err)
	}
	var got, exp []string
	for _, s := range vec {
		got = append(got, fmt.Sprintf("%s %g", s.Metric, s.F))
	}
	for _, e := range q.ExpSamples {
		ls, err := parser.NewParser(parser.Options{}).ParseMetric(e.Labels)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, e.Labels, err)
		}
		exp = append(exp, fmt.Sprintf("%s %g", ls, e.Value))
	}
	sort.Strings(got)
	sort.Strings(exp)
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		return []string{fmt.Sprintf("%s: %s at %s:\n  expected %q\n  got      %q", name, q.Expr, q.EvalTime, exp, got)}
	}
	return nil
}

// promtool runs the real promtool when INFERSLO_PROMTOOL names one.
// loadSet loads spec files or folders that must hold no error.
func loadSet(t *testing.T, paths ...string) model.Set {
	t.Helper()
	res, err := spec.Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res.Set
}

// parseSet parses one spec text that must hold no error.
func parseSet(t *testing.T, text string) model.Set {
	t.Helper()
	res, err := spec.Parse(spec.Source{Name: "spec.yaml", Data: []byte(text)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res.Set
}

// mustPass runs generated tests that must pass: with the real promtool when
// INFERSLO_PROMTOOL names one (as in CI), in process otherwise. Both
// evaluate with Prometheus' own rule engine, so one run is the proof;
// tests that need the failures themselves call runTests. Given names, it
// runs only the test groups of those names (promtool on a copy of the file
// holding only them): every group replays the whole rule file, and a test
// whose claim is one group's need not replay the others.
func mustPass(t *testing.T, dir, testPath string, names ...string) {
	t.Helper()
	if os.Getenv("INFERSLO_PROMTOOL") != "" {
		if len(names) > 0 {
			testPath = onlyGroups(t, testPath, names)
		}
		promtool(t, testPath)
		return
	}
	if fails := runTests(t, dir, testPath, names...); len(fails) > 0 {
		t.Fatalf("the generated tests of %s fail on the generated rules:\n%s", filepath.Base(testPath), strings.Join(fails, "\n"))
	}
}

// testGroupsOf names the test groups of a test file that are about one SLO.
func testGroupsOf(t *testing.T, data []byte, slo string) []string {
	t.Helper()
	var f File
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tg := range f.Tests {
		if strings.HasPrefix(tg.Name, slo+": ") {
			out = append(out, tg.Name)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no test group of SLO %s", slo)
	}
	return out
}

// onlyGroups writes, beside a test file, a copy holding only the named test
// groups, and returns its path.
func onlyGroups(t *testing.T, testPath string, names []string) string {
	t.Helper()
	f := readTestFile(t, testPath)
	var kept []Test
	for _, tg := range f.Tests {
		if slices.Contains(names, tg.Name) {
			kept = append(kept, tg)
		}
	}
	if len(kept) < len(names) {
		t.Fatalf("%s holds %d of the test groups %q", filepath.Base(testPath), len(kept), names)
	}
	f.Tests = kept
	data, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	only := strings.TrimSuffix(testPath, ".test.yaml") + ".only.test.yaml"
	if err := os.WriteFile(only, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return only
}

func promtool(t *testing.T, testPath string) {
	bin := os.Getenv("INFERSLO_PROMTOOL")
	if bin == "" {
		return
	}
	out, err := exec.Command(bin, "test", "rules", testPath).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules %s: %v\n%s", testPath, err, out)
	}
	t.Logf("promtool test rules %s:\n%s", filepath.Base(testPath), out)
}

// readTestFile reads a promtool test file.
func readTestFile(t *testing.T, path string) File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f File
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f
}
