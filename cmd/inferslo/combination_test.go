package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/engine"
)

// combination is one row of the feature matrix, an index per dimension.
type combination []int

// dimensions of the matrix, by name and values.
var dimensions = []struct {
	name   string
	values []string
}{
	{"engine", []string{"vllm", "sglang", "tgi", "triton", "trtllm-serve", "dynamo", "litellm", "otel"}},
	{"slis", []string{"latency", "failures", "every"}},
	{"groupBy", []string{"none", "model"}},
	{"window", []string{"rolling", "calendar"}},
	{"tier", []string{"interactive", "batch"}},
	{"autoscaling", []string{"none", "queue", "capacity"}},
	{"signals", []string{"defaults", "tuned", "off"}},
	{"form", []string{"shorthand", "openslo"}},
	{"histograms", []string{"classic", "native"}},
	{"ruler", []string{"prometheus", "mimir", "vmalert"}},
}

// pairwise returns rows covering every pair of values of two dimensions:
// greedily, each row the seeded candidate covering most uncovered pairs.
func pairwise() []combination {
	type pair struct{ d1, v1, d2, v2 int }
	uncovered := map[pair]bool{}
	for d1 := range dimensions {
		for d2 := d1 + 1; d2 < len(dimensions); d2++ {
			for v1 := range dimensions[d1].values {
				for v2 := range dimensions[d2].values {
					uncovered[pair{d1, v1, d2, v2}] = true
				}
			}
		}
	}
	pairsOf := func(c combination) []pair {
		var out []pair
		for d1 := range c {
			for d2 := d1 + 1; d2 < len(c); d2++ {
				out = append(out, pair{d1, c[d1], d2, c[d2]})
			}
		}
		return out
	}
	r := rand.New(rand.NewPCG(33, 1))
	var rows []combination
	for len(uncovered) > 0 {
		// The first uncovered pair, in a fixed order: map order would
		// change the rows from run to run.
		first := pair{len(dimensions), 0, 0, 0}
		for p := range uncovered {
			if p.d1 < first.d1 || p.d1 == first.d1 && (p.v1 < first.v1 || p.v1 == first.v1 && (p.d2 < first.d2 || p.d2 == first.d2 && p.v2 < first.v2)) {
				first = p
			}
		}
		var best combination
		bestN := -1
		for range 50 {
			c := make(combination, len(dimensions))
			for d := range c {
				c[d] = r.IntN(len(dimensions[d].values))
			}
			// Seed the candidate with one uncovered pair, so every row
			// covers at least one.
			p := first
			c[p.d1], c[p.d2] = p.v1, p.v2
			n := 0
			for _, p := range pairsOf(c) {
				if uncovered[p] {
					n++
				}
			}
			if n > bestN {
				best, bestN = c, n
			}
		}
		for _, p := range pairsOf(best) {
			delete(uncovered, p)
		}
		rows = append(rows, best)
	}
	return rows
}

func (c combination) value(name string) string {
	for d, dim := range dimensions {
		if dim.name == name {
			return dim.values[c[d]]
		}
	}
	panic("no dimension " + name)
}

func (c combination) String() string {
	var parts []string
	for d, dim := range dimensions {
		parts = append(parts, dim.values[c[d]])
	}
	return strings.Join(parts, ",")
}

// modelLabel is the label an engine's series name the model by.
var modelLabel = map[string]string{
	"vllm": "model_name", "sglang": "model_name", "trtllm-serve": "model_name", "tgi": "pod",
	"triton": "model", "dynamo": "model", "litellm": "model", "otel": "gen_ai_request_model",
}

// shorthandOf writes the row's spec in the shorthand, from what the
// engine's catalog entry serves.
func shorthandOf(t *testing.T, cat *engine.Catalog, c combination) string {
	t.Helper()
	id := c.value("engine")
	eng, _ := cat.Engine(id)
	native := c.value("histograms") == "native"
	if native {
		if e, err := eng.As(engine.Native); err == nil {
			eng = e
		}
	}
	serves := eng.SLIs()
	threshold := func(role string) string {
		h := eng.Histograms[role]
		if h == nil || len(h.Buckets) == 0 {
			return "500ms"
		}
		// A bucket in the middle of the engine's, in milliseconds.
		b := h.Buckets[len(h.Buckets)/2] / h.Scale()
		return strconv.FormatFloat(b*1000, 'f', -1, 64) + "ms"
	}
	var objectives []string
	add := func(sli, target string) {
		if !slices.Contains(serves, sli) {
			return
		}
		if engine.IsLatency(sli) {
			objectives = append(objectives, fmt.Sprintf("{sli: %s, threshold: %s, target: %s}", sli, threshold(sli), target))
			return
		}
		objectives = append(objectives, fmt.Sprintf("{sli: %s, target: %s}", sli, target))
	}
	batch := c.value("tier") == "batch"
	switch c.value("slis") {
	case "latency":
		if batch {
			add("e2e", "99%")
		} else {
			add("ttft", "99%")
		}
		add("errors", "99.9%")
	case "failures":
		add("errors", "99.9%")
		for _, k := range []string{"incomplete", "rejections", "streams"} {
			add(k, "99.5%")
		}
	case "every":
		for _, sli := range serves {
			switch {
			case sli == "goodput":
			case engine.IsLatency(sli):
				add(sli, "99%")
			default:
				add(sli, "99.5%")
			}
		}
		if slices.Contains(serves, "ttft") && slices.Contains(serves, "tpot") {
			objectives = append(objectives, "{sli: goodput, target: 98%}")
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: inferslo/v1alpha1\nkind: InferenceSLO\nmetadata: {name: combo}\nspec:\n  engine: %s\n", id)
	if native {
		b.WriteString("  histogramType: native\n")
	}
	if batch {
		b.WriteString("  tier: batch\n")
	}
	label := modelLabel[id]
	b.WriteString("  selector: {namespace: llm}\n")
	grouped := c.value("groupBy") == "model"
	if grouped {
		fmt.Fprintf(&b, "  groupBy: [%s]\n", label)
	}
	switch c.value("window") {
	case "calendar":
		b.WriteString("  window: 1M\n  calendar: {timeZone: UTC}\n")
	default:
		b.WriteString("  window: 28d\n")
	}
	fmt.Fprintf(&b, "  objectives:\n")
	for _, o := range objectives {
		fmt.Fprintf(&b, "    - %s\n", o)
	}
	b.WriteString("  alerting:\n    runbookURL: https://runbooks.example.com/combo\n")
	switch c.value("signals") {
	case "tuned":
		b.WriteString("    queueBacklog: {perReplica: \"6\"}\n    loadShedding: {shed: {above: \"2\", for: 30s}}\n")
	case "off":
		b.WriteString("    outage: {enabled: false}\n    queueBacklog: {enabled: false}\n    loadShedding: {enabled: false}\n")
	}
	if as := c.value("autoscaling"); as != "none" {
		target := "vllm-combo"
		if grouped {
			target = "combo-{{" + label + "}}"
		}
		fmt.Fprintf(&b, "  autoscaling:\n    target: {name: %q}\n    minReplicas: 2\n    maxReplicas: 8\n    prometheus: http://prometheus:9090\n", target)
		if as == "capacity" {
			b.WriteString("    capacity: {peakRPS: \"40\", meanServiceTime: 2s, replicaConcurrency: \"16\"}\n")
		} else {
			b.WriteString("    queuePerReplica: \"2\"\n")
		}
		if grouped {
			fmt.Fprintf(&b, "    groups: [{%s: m1}, {%s: m2}]\n", label, label)
		}
	}
	return b.String()
}

// TestEveryPairOfFeaturesAgrees compiles a pairwise cover of the feature
// matrix. For every spec that validates: compile --tests succeeds, lint
// reports no error and no warning on the output (the spec's own warnings
// are validate's), validate --metrics passes on the engine's scrape in
// testdata/scrapes (classic histograms: the text format holds no native
// ones), and, when INFERSLO_PROMTOOL names promtool, promtool checks every
// rule and ruler file written and tests the rules. Each row compiles for
// a ruler (Prometheus, Mimir's chained groups, vmalert); vmalert refuses
// native histograms. A spec that does not validate is refused with
// located problems, never a crash.
func TestEveryPairOfFeaturesAgrees(t *testing.T) {
	t.Parallel()
	start := time.Now()
	cat, err := spec.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	promtool := os.Getenv("INFERSLO_PROMTOOL")
	rows := pairwise()
	valid, refused := 0, 0
	tested := map[string]bool{}
	for _, c := range rows {
		t.Run(c.String(), func(t *testing.T) {
			dir := t.TempDir()
			text := shorthandOf(t, cat, c)
			path := filepath.Join(dir, "combo.yaml")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			ruler := []string{"--ruler", c.value("ruler")}
			code := run(append([]string{"validate", path}, ruler...), &stdout, &stderr)
			if c.value("ruler") == "vmalert" && c.value("histograms") == "native" {
				// MetricsQL has no native histograms: refused, for that
				// reason unless the spec has others.
				refused++
				if code != 1 || !strings.Contains(stderr.String(), "combo.yaml:") {
					t.Errorf("validate --ruler vmalert of native histograms exits %d without a located problem:\n%s", code, stderr.String())
				}
				t.Logf("refused: %s", firstLine(stderr.String()))
				return
			}
			if code != exitOK {
				t.Logf("refused: %s", firstLine(stderr.String()))
				if code != 1 || !strings.Contains(stderr.String(), "combo.yaml:") {
					t.Errorf("validate exits %d without a located problem:\n%s\n%s", code, stderr.String(), text)
				}
				return
			}
			if c.value("form") == "openslo" {
				stdout.Reset()
				if code := run([]string{"export", path}, &stdout, &stderr); code != exitOK {
					t.Fatalf("export exits %d:\n%s", code, stderr.String())
				}
				if err := os.WriteFile(path, stdout.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			valid++
			out := filepath.Join(dir, "out")
			stderr.Reset()
			if code := run(append([]string{"compile", path, "-o", out, "--tests"}, ruler...), &stdout, &stderr); code != exitOK {
				t.Fatalf("compile --tests exits %d:\n%s\n%s", code, stderr.String(), text)
			}
			var own []string
			for _, f := range lintFindings(t, path, out) {
				if !strings.HasPrefix(f, path+":") {
					own = append(own, f)
				}
			}
			if len(own) > 0 {
				t.Errorf("lint finds %d problems in the output:\n%s\n%s", len(own), strings.Join(own, "\n"), text)
			}
			if scrape := filepath.Join("..", "..", "testdata", "scrapes", c.value("engine")+".prom"); c.value("histograms") == "classic" {
				stderr.Reset()
				if code := run([]string{"validate", path, "--metrics", scrape}, &stdout, &stderr); code != exitOK {
					t.Errorf("validate --metrics %s exits %d:\n%s\n%s", filepath.Base(scrape), code, stderr.String(), text)
				}
			}
			if promtool == "" {
				return
			}
			files, _ := filepath.Glob(filepath.Join(out, "prometheus", "*.rules.yaml"))
			ruled, _ := filepath.Glob(filepath.Join(out, "ruler", "*.yaml"))
			files = append(files, ruled...)
			for _, f := range files {
				if b, err := exec.Command(promtool, "check", "rules", f).CombinedOutput(); err != nil {
					t.Errorf("promtool check rules %s: %v\n%s", filepath.Base(f), err, b)
				}
			}
			// promtool's replay takes seconds per file: the tests of the
			// first valid row run (with INFERSLO_LONG, of each engine's),
			// the others are checked.
			key := "any"
			if os.Getenv("INFERSLO_LONG") != "" {
				key = c.value("engine")
			}
			if tested[key] {
				return
			}
			tested[key] = true
			tests, _ := filepath.Glob(filepath.Join(out, "prometheus", "*.test.yaml"))
			for _, f := range tests {
				cmd := exec.Command(promtool, "test", "rules", filepath.Base(f))
				cmd.Dir = filepath.Dir(f)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("promtool test rules %s: %v\n%s\n%s", filepath.Base(f), err, tail(string(b), 3000), text)
				}
			}
		})
	}
	t.Logf("pairwise matrix: %d dimensions, %d rows, %d valid specs, %d refused by design, %s", len(dimensions), len(rows), valid, refused, time.Since(start).Round(time.Millisecond))
	if valid < (len(rows)-refused)/2 {
		t.Errorf("only %d of %d rows validate (%d refused by design); the generator writes broken specs", valid, len(rows), refused)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
