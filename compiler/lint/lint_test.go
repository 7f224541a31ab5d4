package lint

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/scrape"
	"github.com/inferslo/inferslo/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func readSources(t testing.TB, paths ...string) []Source {
	t.Helper()
	files, err := spec.Discover(paths...)
	if err != nil {
		t.Fatal(err)
	}
	var out []Source
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Source{Name: f, Data: data})
	}
	return out
}

func lintFiles(t testing.TB, opts Options, paths ...string) Result {
	t.Helper()
	res, err := Run(readSources(t, paths...), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var want = regexp.MustCompile(`want: ([\w/.-]+)`)

// expected reads the defects a fixture declares: `# want: <id>` on the
// line (YAML, or PromQL comments in a block), or `<line> <id>` lines in a
// .want file next to it (JSON has no comments).
func expected(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, l := range strings.Split(string(data), "\n") {
		for _, m := range want.FindAllStringSubmatch(l, -1) {
			out = append(out, fmt.Sprintf("%d %s", i+1, m[1]))
		}
	}
	if side, err := os.ReadFile(path + ".want"); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(side)), "\n") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	sort.Strings(out)
	return out
}

func TestEveryDefectIsReportedAtItsLine(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".want") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			res := lintFiles(t, Options{}, f)
			var got []string
			for _, fd := range res.Findings {
				got = append(got, fmt.Sprintf("%d %s", fd.Line, fd.Check))
			}
			sort.Strings(got)
			exp := expected(t, f)
			if len(exp) == 0 {
				t.Fatal("fixture declares no defect")
			}
			if !slices.Equal(got, exp) {
				t.Errorf("findings (line id):\n got  %q\n want %q", got, exp)
			}
		})
	}
}

func TestCleanFilesGetNoFindings(t *testing.T) {
	res := lintFiles(t, Options{}, "testdata/clean")
	if res.Files < 4 {
		t.Fatalf("linted %d files, want the 4 clean fixtures", res.Files)
	}
	for _, f := range res.Findings {
		t.Errorf("%s:%d:%d: %s (%s)", f.File, f.Line, f.Column, f.Message, f.Check)
	}
}

func TestCleanFilesMatchTheVLLMScrape(t *testing.T) {
	scr, err := scrape.Load(t.Context(), "testdata/vllm-metrics.prom", scrape.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res := lintFiles(t, Options{Scrape: scr}, "testdata/clean")
	for _, f := range res.Findings {
		t.Errorf("%s:%d:%d: %s (%s)", f.File, f.Line, f.Column, f.Message, f.Check)
	}
}

// Everything inferslo compiles from the examples, tests and
// AnalysisTemplates included, must lint clean, with no file left unread.
func TestCompiledExamplesLintClean(t *testing.T) {
	loaded, err := spec.Load("../../examples")
	if err != nil || loaded.Err() != nil {
		t.Fatal(err, loaded.Err())
	}
	out, err := compiler.Compile(loaded.Set, compiler.Options{Tests: true, AnalysisTemplates: true, AnalysisFailBelow: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	var sources []Source
	for _, f := range out.Files {
		if ext := filepath.Ext(f.Path); ext == ".yaml" || ext == ".json" {
			sources = append(sources, Source{Name: f.Path, Data: f.Data})
		}
	}
	if len(sources) < 10 {
		t.Fatalf("compiled only %d files", len(sources))
	}
	res, err := Run(sources, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Errorf("%s:%d:%d: %s (%s)", f.File, f.Line, f.Column, f.Message, f.Check)
	}
	for _, s := range res.Skipped {
		t.Errorf("%s: not linted: %s", s.File, s.Reason)
	}
}

func TestTheSeedTTFTRuleNamesTheNeighbouringBuckets(t *testing.T) {
	res := lintFiles(t, Options{}, "testdata/bad/vllm-latency.rules.yaml")
	for _, f := range res.Findings {
		if f.Check == "engine/le-not-a-bucket" {
			if !strings.Contains(f.Message, `le="0.25" and le="0.5"`) {
				t.Fatalf("message %q does not name the neighbours 0.25 and 0.5", f.Message)
			}
			if f.Line != 8 || f.Column != 60 || !strings.HasPrefix(f.Source[f.Column-1:], `le="0.3"`) {
				t.Fatalf("reported at %d:%d, want the le matcher at 8:60", f.Line, f.Column)
			}
			return
		}
	}
	t.Fatal("le=\"0.3\" on vLLM's TTFT histogram was not reported")
}

func TestInlineDisablesSilenceOnlyTheirRule(t *testing.T) {
	src := readSources(t, "testdata/bad/prometheusrule.yaml")
	with, err := Run(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src[0].Data = bytes.ReplaceAll(src[0].Data, []byte("inferslo-lint: disable"), []byte("note"))
	without, err := Run(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	count := func(r Result) int {
		n := 0
		for _, f := range r.Findings {
			if f.Check == "engine/le-not-a-bucket" {
				n++
			}
		}
		return n
	}
	if count(with) != 1 || count(without) != 3 {
		t.Fatalf("le-not-a-bucket findings: %d with the disables, %d without; want 1 and 3", count(with), count(without))
	}
}

func TestScrapeChecks(t *testing.T) {
	scr, err := scrape.Load(t.Context(), "testdata/vllm-metrics.prom", scrape.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, expr, check, message string
	}{
		{"a metric the scrape lacks is reported", `vllm:gpu_cache_usage_perc > 0.9`, "metrics/no-series", "no series named vllm:gpu_cache_usage_perc"},
		{"a label value the scrape lacks is reported with the values it has", `vllm:num_requests_waiting{model_name="llama-3-8b"}`, "metrics/label-value", `"llama-3-70b-instruct"`},
		{"an le the scrape does not expose is reported", `rate(vllm:e2e_request_latency_seconds_bucket{le="0.7"}[5m])`, "metrics/le-not-exposed", `"0.5", "0.8"`},
		{"matchers that each match but never together are reported", `vllm:request_success_total{finished_reason="error",engine="1"}`, "metrics/label-value", `engine="1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := Source{Name: "r.yaml", Data: []byte("groups:\n- name: g\n  rules:\n  - record: x\n    expr: '" + tt.expr + "'\n")}
			res, err := Run([]Source{src}, Options{Scrape: scr})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.Check == tt.check && strings.Contains(f.Message, tt.message) {
					return
				}
			}
			t.Fatalf("no %s finding containing %q in %+v", tt.check, tt.message, res.Findings)
		})
	}
}

func TestPositionsMapIntoTheFile(t *testing.T) {
	tests := []struct {
		name, file, at string // at: text the finding's column must point to
		line           int
	}{
		{"a plain scalar", "groups:\n- name: g\n  rules:\n  - record: r\n    expr: sum(rate(vllm:time_to_first_token_seconds_bucket{le=\"0.3\"}[5m]))\n", `le="0.3"`, 5},
		{"a double-quoted scalar with escapes", "groups:\n- name: g\n  rules:\n  - record: r\n    expr: \"sum(x{a=\\\"b\\\"}) + sum(rate(vllm:time_to_first_token_seconds_bucket{le=\\\"0.3\\\"}[5m]))\"\n", `le=\"0.3\"`, 5},
		{"a folded block", "groups:\n- name: g\n  rules:\n  - record: r\n    expr: >-\n      sum(\n        rate(vllm:time_to_first_token_seconds_bucket{le=\"0.3\"}[5m])\n      )\n", `le="0.3"`, 7},
		{"a literal block after a blank line", "groups:\n- name: g\n  rules:\n  - record: r\n    expr: |\n      sum(\n\n        rate(vllm:time_to_first_token_seconds_bucket{le=\"0.3\"}[5m]))\n", `le="0.3"`, 8},
		{"a JSON dashboard target", "{\"panels\": [{\"targets\": [{\"expr\": \"sum(rate(vllm:time_to_first_token_seconds_bucket{job=\\\"$job\\\",le=\\\"0.3\\\"}[$__rate_interval]))\"}]}]}", `le=\"0.3\"`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run([]Source{{Name: "f", Data: []byte(tt.file)}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.Check != "engine/le-not-a-bucket" {
					continue
				}
				if f.Line != tt.line || !strings.HasPrefix(f.Source[f.Column-1:], tt.at) {
					t.Fatalf("reported at %d:%d (%q), want line %d at %q", f.Line, f.Column, f.Source, tt.line, tt.at)
				}
				return
			}
			t.Fatalf("not reported: %+v", res.Findings)
		})
	}
}

func TestOutputFormats(t *testing.T) {
	res := lintFiles(t, Options{}, "testdata/bad/vllm-latency.rules.yaml")
	var b bytes.Buffer
	if err := Write(&b, "json", res); err != nil {
		t.Fatal(err)
	}
	var js []Finding
	if err := json.Unmarshal(b.Bytes(), &js); err != nil || len(js) != len(res.Findings) {
		t.Fatalf("json: %v, %d findings of %d", err, len(js), len(res.Findings))
	}
	b.Reset()
	if err := Write(&b, "github", res); err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(b.String(), "\n", 2)[0]
	if wantLine := "::error file=testdata/bad/vllm-latency.rules.yaml,line=8,col=60,title=engine/le-not-a-bucket::"; !strings.HasPrefix(first, wantLine) {
		t.Fatalf("github annotation %q, want prefix %q", first, wantLine)
	}
	b.Reset()
	if err := Write(&b, "sarif", res); err != nil {
		t.Fatal(err)
	}
	var sarif struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct{ Rules []struct{ ID string } }
			}
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct{ Region struct{ StartLine int } }
				}
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &sarif); err != nil {
		t.Fatal(err)
	}
	if sarif.Version != "2.1.0" || len(sarif.Runs) != 1 || len(sarif.Runs[0].Results) != len(res.Findings) || len(sarif.Runs[0].Tool.Driver.Rules) != len(Checks()) {
		t.Fatalf("sarif: %+v", sarif)
	}
	if r := sarif.Runs[0].Results[0]; r.RuleID != "engine/le-not-a-bucket" || r.Locations[0].PhysicalLocation.Region.StartLine != 8 {
		t.Fatalf("first sarif result %+v", r)
	}
}

func TestGoldenTextOutput(t *testing.T) {
	res := lintFiles(t, Options{}, "testdata/bad")
	var b bytes.Buffer
	if err := Write(&b, "text", res); err != nil {
		t.Fatal(err)
	}
	golden := "testdata/golden/bad.txt"
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != b.String() {
		t.Errorf("text output differs from %s (run go test -update and read the diff):\n%s", golden, b.String())
	}
}

func TestEveryCheckIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/lint.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range Checks() {
		if seen[c.ID] {
			t.Errorf("duplicate check id %s", c.ID)
		}
		seen[c.ID] = true
		if !strings.Contains(string(doc), "### "+c.ID+"\n") {
			t.Errorf("docs/lint.md has no section for %s", c.ID)
		}
	}
}

// A spec scraped every 10s gets burn windows shorter than four 30s scrapes
// (lint's default): in inferslo's output that is the spec's fact, told as
// info, while the same rules hand-written (no generated header) warn.
func TestCompiledOutputOfAFastScrapeIsNotWarnedAbout(t *testing.T) {
	loaded, err := spec.Parse(spec.Source{Name: "fast.yaml", Data: []byte(`apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: fast}
spec:
  engine: vllm
  selector: {model_name: m}
  window: 7d
  scrapeInterval: 10s
  objectives:
    - {sli: ttft, threshold: 250ms, target: 99%}
    - {sli: errors, target: 99.9%}
`)})
	if err != nil || loaded.Err() != nil {
		t.Fatal(err, loaded.Err())
	}
	out, err := compiler.Compile(loaded.Set, compiler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out.Files {
		if !strings.HasSuffix(f.Path, ".rules.yaml") {
			continue
		}
		for _, c := range []struct {
			name      string
			data      []byte
			generated bool
		}{
			{"as compiled", f.Data, true},
			{"without its header", bytes.ReplaceAll(f.Data, []byte("Code generated by inferslo"), []byte("Written by hand")), false},
		} {
			res, err := Run([]Source{{Name: f.Path, Data: c.data}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			short := 0
			for _, fd := range res.Findings {
				if fd.Severity != Info {
					if fd.Check != "slo/window-too-short" || c.generated {
						t.Errorf("%s %s:%d: %s (%s, %s)", c.name, fd.File, fd.Line, fd.Message, fd.Check, fd.Severity)
					}
					short++
				}
			}
			if !c.generated && short == 0 {
				t.Errorf("%s: no slo/window-too-short warning for the 10s scrape's short windows; the test no longer covers the demotion", c.name)
			}
		}
	}
}
