package compiler_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/templates"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output")

// TestExamplesMatchGoldenFiles compiles the bundled examples and compares
// every artifact with testdata/golden; `go test ./compiler -update`
// refreshes them.
func TestExamplesMatchGoldenFiles(t *testing.T) {
	t.Chdir("..")
	res, err := spec.Load("examples")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("examples do not load:\n%v", err)
	}
	out, err := compiler.Compile(res.Set, compiler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files := out.Files
	golden := filepath.Join("testdata", "golden", "examples")
	if *update {
		if err := os.RemoveAll(golden); err != nil {
			t.Fatal(err)
		}
		if err := files.Write(golden, "compile"); err != nil {
			t.Fatal(err)
		}
		return
	}
	diff, err := files.Diff(golden, "compile")
	if err != nil {
		t.Fatal(err)
	}
	if len(diff) > 0 {
		t.Fatalf("output differs from %s (run go test ./compiler -update and read the diff):\n%s", golden, diff)
	}
}

// TestCompilingTwiceGivesTheSameBytes guards determinism: map order,
// float printing or time must never leak into artifacts.
func TestCompilingTwiceGivesTheSameBytes(t *testing.T) {
	t.Chdir("..")
	var outs [][]byte
	for range 3 {
		res, err := spec.Load("examples")
		if err != nil {
			t.Fatal(err)
		}
		out, err := compiler.Compile(res.Set, compiler.Options{})
		if err != nil {
			t.Fatal(err)
		}
		files := out.Files
		var all bytes.Buffer
		for _, f := range files {
			all.WriteString(f.Path + "\n")
			all.Write(f.Data)
		}
		outs = append(outs, all.Bytes())
	}
	for i := 1; i < len(outs); i++ {
		if !bytes.Equal(outs[0], outs[i]) {
			t.Fatal("two compilations of the same specs differ")
		}
	}
}

// TestATemplateOverrideChangesOnlyAnnotationText compiles the examples with
// the built-in wording and with three templates replaced: every file keeps
// its lines but for summary and description lines, in the rule files, the
// PrometheusRule objects, the ruler files and the promtool tests alike, and
// the panel descriptions of the dashboards.
func TestATemplateOverrideChangesOnlyAnnotationText(t *testing.T) {
	t.Chdir("..")
	res, err := spec.Load("examples")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		templates.BurnSummary:       "[[ .BurnTier ]]: [[ .SLO ]] burns {{ $value | humanize }}x; runbook https://wiki.example.com/slo/[[ .SLO ]]\n",
		templates.NoDataDescription: "No samples for [[ .SLO ]] ([[ .SLI ]][[ with .Threshold ]] within [[ . ]][[ end ]])[[ .Group ]]. Page the platform team.\n",
		templates.PanelBurnRate:     "Burn rate of [[ .SLO ]] ([[ .Service ]]); tiers: [[ .Tiers ]]. Playbook: https://wiki.example.com/burn\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, err := templates.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := compiler.Compile(res.Set, compiler.Options{Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	worded, err := compiler.Compile(res.Set, compiler.Options{Tests: true, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Files) != len(worded.Files) {
		t.Fatalf("%d files with the built-in templates, %d with the override", len(plain.Files), len(worded.Files))
	}
	annotation := regexp.MustCompile(`^\s*(summary: |description: |"description": )`)
	changed := map[string]int{}
	for i, f := range plain.Files {
		g := worded.Files[i]
		a, b := strings.Split(string(f.Data), "\n"), strings.Split(string(g.Data), "\n")
		if f.Path != g.Path || len(a) != len(b) {
			t.Fatalf("%s (%d lines) became %s (%d lines)", f.Path, len(a), g.Path, len(b))
		}
		for j := range a {
			if a[j] == b[j] {
				continue
			}
			if !annotation.MatchString(a[j]) || !annotation.MatchString(b[j]) {
				t.Errorf("%s:%d changed beyond annotation text:\n-%s\n+%s", f.Path, j+1, a[j], b[j])
			}
			changed[strings.Split(f.Path, "/")[0]]++
		}
	}
	for _, folder := range []string{"prometheus", "kubernetes", "ruler", "grafana"} {
		if changed[folder] == 0 {
			t.Errorf("no annotation line of %s/ changed", folder)
		}
	}
	for _, want := range []string{
		"summary: 'page: chat-ttft burns {{ $value | humanize }}x; runbook https://wiki.example.com/slo/chat-ttft'",
		"description: No samples for chat-ttft (ttft within 0.25s). Page the platform team.",
		"description: No samples for chat-errors (errors). Page the platform team.",
	} {
		for _, f := range worded.Files {
			if f.Path == "prometheus/chat.rules.yaml" && !bytes.Contains(f.Data, []byte(want)) {
				t.Errorf("%s lacks %q", f.Path, want)
			}
		}
	}
}

// TestManyWorkersEmitWhatOneWorkerEmits compiles the examples on one worker
// and on several: the same files, in the same order, the same warnings,
// and, when two services fail, the error of the first in service order.
func TestManyWorkersEmitWhatOneWorkerEmits(t *testing.T) {
	t.Chdir("..")
	res, err := spec.Load("examples")
	if err != nil {
		t.Fatal(err)
	}
	run := func(set model.Set, parallel int) (string, error) {
		var emitted strings.Builder
		err := compiler.CompileTo(set, compiler.Options{Tests: true, Parallel: parallel}, func(f artifact.File) error {
			emitted.WriteString(f.Path + "\n")
			emitted.Write(f.Data)
			return nil
		})
		return emitted.String(), err
	}
	one, err := run(res.Set, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 5} {
		if many, err := run(res.Set, n); err != nil || many != one {
			t.Errorf("on %d workers: err = %v, same output = %v", n, err, many == one)
		}
	}
	// Two services whose names cannot name a dashboard: the first, in
	// service order, is the one reported.
	broken := model.Set{SLOs: slices.Clone(res.Set.SLOs)}
	services := broken.PerService()
	for i := range broken.SLOs {
		switch broken.SLOs[i].Service.Name {
		case services[1].Name:
			broken.SLOs[i].Service.Name = "b first!"
		case services[len(services)-1].Name:
			broken.SLOs[i].Service.Name = "a second!"
		}
	}
	_, want := run(broken, 1)
	if want == nil || !strings.Contains(want.Error(), "a second!") {
		t.Fatalf("one worker: err = %v, want the service sorted first", want)
	}
	for _, n := range []int{2, 5} {
		if _, err := run(broken, n); err == nil || err.Error() != want.Error() {
			t.Errorf("on %d workers: err = %v, want %v", n, err, want)
		}
	}
}

// TestEachOutputKindIsAFolderAndKeepsOnlyItself compiles the examples
// whole, then one kind at a time: the kinds are exactly the output's
// top-level folders, and each keeps its own folder's files, byte for byte.
func TestEachOutputKindIsAFolderAndKeepsOnlyItself(t *testing.T) {
	t.Chdir("..")
	res, err := spec.Load("examples")
	if err != nil {
		t.Fatal(err)
	}
	opts := compiler.Options{AnalysisTemplates: true}
	all, err := compiler.Compile(res.Set, opts)
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]artifact.Set{}
	for _, f := range all.Files {
		top, _, _ := strings.Cut(f.Path, "/")
		byKind[top] = append(byKind[top], f)
	}
	var folders []string
	for k := range byKind {
		folders = append(folders, k)
	}
	slices.Sort(folders)
	kinds := slices.Sorted(slices.Values(compiler.OutputKinds()))
	if !slices.Equal(folders, kinds) {
		t.Fatalf("the output's folders are %v, the kinds %v", folders, kinds)
	}
	for _, k := range kinds {
		opts.Outputs = []string{k}
		one, err := compiler.Compile(res.Set, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(one.Files) != len(byKind[k]) {
			t.Errorf("--outputs %s: %d files, the full output holds %d there", k, len(one.Files), len(byKind[k]))
			continue
		}
		for i, f := range one.Files {
			if f.Path != byKind[k][i].Path || !bytes.Equal(f.Data, byKind[k][i].Data) {
				t.Errorf("--outputs %s: %s differs from the full output's", k, f.Path)
			}
		}
	}
	if _, err := compiler.Compile(res.Set, compiler.Options{Outputs: []string{"graphs"}}); err == nil || !strings.Contains(err.Error(), "prometheus, kubernetes") {
		t.Errorf("an unknown kind: error %v, want the kinds named", err)
	}
}
