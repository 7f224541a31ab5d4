// Package compiler runs every backend over a model.Set and returns the
// validated artifacts; nothing is written here.
package compiler

import (
	"fmt"

	"github.com/inferslo/inferslo/compiler/alertmanager"
	"github.com/inferslo/inferslo/compiler/artifact"
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
	// PrometheusRule objects: namespace and labels (a Prometheus selects
	// rules by label, e.g. release=kube-prometheus-stack).
	Kube kube.Options
	// Ruler files: Thanos partial_response_strategy (abort or warn).
	Ruler kube.RulerOptions
	// Text words alert annotations and panel descriptions; nil: the
	// built-in templates.
	Text *templates.Text
}

// Output is the result of a compilation.
type Output struct {
	Files artifact.Set
	// Warnings do not stop compilation (a max replica count below the
	// capacity plan, for one).
	Warnings []string
}

// backend builds one kind of artifact from the model.
type backend struct {
	name  string
	build func(model.Set) (artifact.Set, []string, error)
}

// ruleBackend builds artifacts that carry the rule groups every such
// artifact shares.
type ruleBackend struct {
	name  string
	build func([]rules.Service) (artifact.Set, error)
}

func (o Options) ruleBackends() []ruleBackend {
	return []ruleBackend{
		{"prometheus rules", func(svc []rules.Service) (artifact.Set, error) { return rules.Files(svc), nil }},
		{"kubernetes rules", func(svc []rules.Service) (artifact.Set, error) { return kube.PrometheusRules(svc, o.Kube) }},
		{"ruler rules", func(svc []rules.Service) (artifact.Set, error) { return kube.RulerGroups(svc, o.Ruler) }},
	}
}

func (o Options) backends() []backend {
	quiet := func(f func(model.Set) (artifact.Set, error)) func(model.Set) (artifact.Set, []string, error) {
		return func(s model.Set) (artifact.Set, []string, error) {
			files, err := f(s)
			return files, nil, err
		}
	}
	bs := []backend{
		{"alertmanager inhibit rules", quiet(alertmanager.Build)},
		{"grafana dashboards", quiet(func(s model.Set) (artifact.Set, error) { return grafana.Build(s, o.Text) })},
		{"keda scaledobjects", keda.Build},
	}
	if o.Tests {
		bs = append(bs, backend{"promtool tests", quiet(func(s model.Set) (artifact.Set, error) { return promtest.Build(s, o.Text) })})
	}
	return bs
}

// Compile runs every backend and returns the artifacts, sorted. Any error
// means no artifact at all.
func Compile(set model.Set, opts Options) (Output, error) {
	var out Output
	warnings, err := CompileTo(set, opts, func(f artifact.File) error {
		out.Files = append(out.Files, f)
		return nil
	})
	if err != nil {
		return Output{}, err
	}
	out.Warnings = warnings
	out.Files.Sort()
	if err := out.Files.Check(); err != nil {
		return Output{}, err
	}
	return out, nil
}

// CompileTo runs every backend and hands each artifact to emit as soon as
// its backend has built and validated it, so a run holds one backend's
// artifacts at a time; emit checks and stores them (an artifact.Stage
// writes them beside the output). It returns the warnings. On an error,
// the artifacts emitted so far must be dropped.
func CompileTo(set model.Set, opts Options, emit func(artifact.File) error) ([]string, error) {
	text, err := templates.OrDefault(opts.Text)
	if err != nil {
		return nil, err
	}
	opts.Text = text
	emitAll := func(name string, files artifact.Set) error {
		for _, f := range files {
			if err := emit(f); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}
	// Rule groups are built and validated once, then encoded by every
	// artifact that carries them.
	services, err := rules.Services(set, opts.Text)
	if err != nil {
		return nil, fmt.Errorf("prometheus rules: %w", err)
	}
	for _, b := range opts.ruleBackends() {
		files, err := b.build(services)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.name, err)
		}
		if err := emitAll(b.name, files); err != nil {
			return nil, err
		}
	}
	var warnings []string
	for _, b := range opts.backends() {
		files, warns, err := b.build(set)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.name, err)
		}
		if err := emitAll(b.name, files); err != nil {
			return nil, err
		}
		warnings = append(warnings, warns...)
	}
	return warnings, nil
}
