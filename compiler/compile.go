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

// backend builds one kind of artifact from the model and the rule groups
// every rule-carrying artifact shares.
type backend struct {
	name  string
	build func(model.Set, []rules.Service) (artifact.Set, []string, error)
}

func (o Options) backends() []backend {
	quiet := func(f func(model.Set) (artifact.Set, error)) func(model.Set, []rules.Service) (artifact.Set, []string, error) {
		return func(s model.Set, _ []rules.Service) (artifact.Set, []string, error) {
			files, err := f(s)
			return files, nil, err
		}
	}
	bs := []backend{
		{"prometheus rules", func(_ model.Set, svc []rules.Service) (artifact.Set, []string, error) {
			return rules.Files(svc), nil, nil
		}},
		{"alertmanager inhibit rules", quiet(alertmanager.Build)},
		{"grafana dashboards", quiet(func(s model.Set) (artifact.Set, error) { return grafana.Build(s, o.Text) })},
		{"keda scaledobjects", func(s model.Set, _ []rules.Service) (artifact.Set, []string, error) { return keda.Build(s) }},
		{"kubernetes rules", func(_ model.Set, svc []rules.Service) (artifact.Set, []string, error) {
			crs, err := kube.PrometheusRules(svc, o.Kube)
			if err != nil {
				return nil, nil, err
			}
			ruler, err := kube.RulerGroups(svc, o.Ruler)
			if err != nil {
				return nil, nil, err
			}
			return append(crs, ruler...), nil, nil
		}},
	}
	if o.Tests {
		bs = append(bs, backend{"promtool tests", quiet(func(s model.Set) (artifact.Set, error) { return promtest.Build(s, o.Text) })})
	}
	return bs
}

// Compile runs every backend. Any error means no artifact at all.
func Compile(set model.Set, opts Options) (Output, error) {
	var out Output
	text, err := templates.OrDefault(opts.Text)
	if err != nil {
		return Output{}, err
	}
	opts.Text = text
	// Rule groups are built and validated once, then encoded by every
	// artifact that carries them.
	services, err := rules.Services(set, opts.Text)
	if err != nil {
		return Output{}, fmt.Errorf("prometheus rules: %w", err)
	}
	for _, b := range opts.backends() {
		files, warnings, err := b.build(set, services)
		if err != nil {
			return Output{}, fmt.Errorf("%s: %w", b.name, err)
		}
		out.Files = append(out.Files, files...)
		out.Warnings = append(out.Warnings, warnings...)
	}
	out.Files.Sort()
	if err := out.Files.Check(); err != nil {
		return Output{}, err
	}
	return out, nil
}
