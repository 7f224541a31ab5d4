// Package compiler runs every backend over a model.Set and returns the
// validated artifacts; nothing is written here.
package compiler

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/inferslo/inferslo/compiler/alertmanager"
	"github.com/inferslo/inferslo/compiler/argo"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/catalog"
	"github.com/inferslo/inferslo/compiler/grafana"
	"github.com/inferslo/inferslo/compiler/keda"
	"github.com/inferslo/inferslo/compiler/kube"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/promtest"
	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/templates"
)

// Options tune the Kubernetes-facing artifacts.
type Options struct {
	// Tests adds promtool unit-test files beside the rule files.
	Tests bool
	// AnalysisTemplates adds an Argo Rollouts AnalysisTemplate per
	// service, gating a canary on the budget left; AnalysisFailBelow is
	// its default gate, a share of the budget.
	AnalysisTemplates bool
	AnalysisFailBelow float64
	// PrometheusRule objects: namespace and labels (a Prometheus selects
	// rules by label, e.g. release=kube-prometheus-stack).
	Kube kube.Options
	// Ruler files: Thanos partial_response_strategy (abort or warn).
	Ruler kube.RulerOptions
	// ExternalLabels names the labels Prometheus adds to the alerts it
	// sends (external_labels); the inhibit rules mute only alerts sharing
	// their values, so environments and clusters never mute each other.
	ExternalLabels []string
	// Text words alert annotations and panel descriptions; nil: the
	// built-in templates.
	Text *templates.Text
	// Outputs keeps only these kinds of artifact (OutputKinds: the
	// output folder's top-level folders); empty keeps every kind. Every
	// artifact is still built and checked.
	Outputs []string
	// Parallel is how many services compile at once; 0: GOMAXPROCS. The
	// artifacts are the same, and reach emit in the same order, however
	// many.
	Parallel int
}

// Output is the result of a compilation.
type Output struct {
	Files artifact.Set
}

// backends returns a fresh set of backends: one per worker, since the
// validator and the dashboard builder cache what services repeat (the same
// expression shapes and alert texts) and are not locked.
func (o Options) backends() ([]Backend, error) {
	dashboards, err := grafana.NewBuilder(o.Text)
	if err != nil {
		return nil, err
	}
	dashboards.ExternalLabels = o.ExternalLabels
	backends := []Backend{
		ruleFiles{o, rules.NewValidator(), kube.NewObjects(o.Kube)},
		keda.Backend{},
		grafana.ServiceDashboards{Builder: dashboards},
		grafana.OverviewDashboard{Builder: dashboards},
		alertmanager.Backend{ExternalLabels: o.ExternalLabels},
		catalog.Backend{},
	}
	if o.AnalysisTemplates {
		backends = append(backends, argo.Backend{FailBelow: o.AnalysisFailBelow})
	}
	return backends, nil
}

// ruleFiles is the backend of everything that carries the rule groups:
// rule files, PrometheusRule objects, ruler files and, with Tests, the
// promtool tests of their alerts. It builds the groups once for all four.
type ruleFiles struct {
	opts    Options
	v       *rules.Validator
	objects *kube.Objects
}

func (ruleFiles) Name() string     { return "prometheus rules" }
func (ruleFiles) PerService() bool { return true }

func (r ruleFiles) Build(set model.Set) (artifact.Set, error) {
	o := r.opts
	services, err := r.v.Services(set, o.Text)
	if err != nil {
		return nil, err
	}
	crs, err := r.objects.PrometheusRules(services)
	if err != nil {
		return nil, fmt.Errorf("kubernetes rules: %w", err)
	}
	ruler, err := kube.RulerGroups(services, o.Ruler)
	if err != nil {
		return nil, fmt.Errorf("ruler rules: %w", err)
	}
	files := append(append(rules.Files(services), crs...), ruler...)
	if o.Tests {
		tests, err := promtest.Files(set, services)
		if err != nil {
			return nil, fmt.Errorf("promtool tests: %w", err)
		}
		files = append(files, tests...)
	}
	return files, nil
}

// Compile runs every backend and returns the artifacts, sorted. Any error
// means no artifact at all.
func Compile(set model.Set, opts Options) (Output, error) {
	var out Output
	err := CompileTo(set, opts, func(f artifact.File) error {
		out.Files = append(out.Files, f)
		return nil
	})
	if err != nil {
		return Output{}, err
	}
	out.Files.Sort()
	if err := out.Files.Check(); err != nil {
		return Output{}, err
	}
	return out, nil
}

// CompileTo runs every backend and hands each artifact to emit once its
// backend has built and validated it: service by service (Parallel
// services at once, emitted in service order), then the artifacts that span
// services, so a run holds a few services' artifacts at a time. emit checks
// and stores them (an artifact.Stage writes them beside the output). On an
// error, the artifacts emitted so far must be dropped.
func CompileTo(set model.Set, opts Options, emit func(artifact.File) error) error {
	text, err := templates.OrDefault(opts.Text)
	if err != nil {
		return err
	}
	opts.Text = text
	keep, err := outputFilter(opts.Outputs)
	if err != nil {
		return err
	}
	use := func(bs []built) error {
		for _, b := range bs {
			for _, f := range b.files {
				if !keep(f.Path) {
					continue
				}
				if err := emit(f); err != nil {
					return fmt.Errorf("%s: %w", b.backend, err)
				}
			}
		}
		return nil
	}
	workers := opts.Parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	bs, err := opts.backends()
	if err != nil {
		return err
	}
	// The artifacts that span services are built while the services'
	// own are, and emitted after them.
	spanning := make(chan spanned, 1)
	go func() { spanning <- buildSpanning(bs, set) }()
	if err := eachService(set.PerService(), workers, opts.backends, use); err != nil {
		<-spanning
		return err
	}
	sp := <-spanning
	if err := use(sp.built); err != nil {
		return err
	}
	return sp.err
}

// spanned is what the backends that span services built, in backend order,
// up to the first error.
type spanned struct {
	built []built
	err   error
}

func buildSpanning(bs []Backend, set model.Set) spanned {
	var out []built
	for _, b := range bs {
		if !b.PerService() {
			files, err := b.Build(set)
			if err != nil {
				return spanned{out, fmt.Errorf("%s: %w", b.Name(), err)}
			}
			out = append(out, built{b.Name(), files})
		}
	}
	return spanned{out, nil}
}

// OutputKinds are the kinds of artifact compile writes, each the name of
// its top-level folder in the output (argo with AnalysisTemplates only).
func OutputKinds() []string {
	return []string{"prometheus", "kubernetes", "ruler", "grafana", "keda", "alertmanager", "catalog", "argo"}
}

// CheckOutputs refuses a kind of artifact compile does not write.
func CheckOutputs(kinds []string) error {
	for _, k := range kinds {
		if !slices.Contains(OutputKinds(), k) {
			return fmt.Errorf("output kind %q: the kinds are %s", k, strings.Join(OutputKinds(), ", "))
		}
	}
	return nil
}

// outputFilter tells which artifact paths the kinds keep.
func outputFilter(kinds []string) (func(path string) bool, error) {
	if len(kinds) == 0 {
		return func(string) bool { return true }, nil
	}
	if err := CheckOutputs(kinds); err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, k := range kinds {
		keep[k] = true
	}
	return func(path string) bool {
		top, _, _ := strings.Cut(path, "/")
		return keep[top]
	}, nil
}

// built is what one backend built for one service.
type built struct {
	backend string
	files   artifact.Set
}

// eachService builds every service's artifacts on n workers, each with its
// own backends (their caches are not shared, so none is locked), and hands
// them to use in service order. At most 2n services' artifacts are held at
// once. The first error in service order is returned, as a run on one
// worker would return it.
func eachService(svcs []model.ServiceSLOs, n int, newBackends func() ([]Backend, error), use func([]built) error) error {
	type result struct {
		built []built
		err   error
	}
	results := make([]chan result, len(svcs))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	jobs := make(chan int)
	stop := make(chan struct{})
	slots := make(chan struct{}, 2*n)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	wg.Go(func() {
		defer close(jobs)
		for i := range svcs {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case jobs <- i:
			case <-stop:
				return
			}
		}
	})
	for range min(n, len(svcs)) {
		bs, err := newBackends()
		if err != nil {
			return err
		}
		wg.Go(func() {
			for i := range jobs {
				b, err := serviceBuild(bs, svcs[i].SLOs)
				results[i] <- result{b, err}
			}
		})
	}
	for i := range svcs {
		r := <-results[i]
		<-slots
		if r.err != nil {
			return r.err
		}
		if err := use(r.built); err != nil {
			return err
		}
	}
	return nil
}

// serviceBuild runs the per-service backends over one service's SLOs.
func serviceBuild(bs []Backend, slos []model.SLO) ([]built, error) {
	var out []built
	for _, b := range bs {
		if !b.PerService() {
			continue
		}
		files, err := b.Build(model.Set{SLOs: slos})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		out = append(out, built{b.Name(), files})
	}
	return out, nil
}
