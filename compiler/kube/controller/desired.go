package controller

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/kube"
	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/engine"
)

// GVK is the InferenceSLO kind in a cluster.
var GVK = schema.GroupVersionKind{Group: Group, Version: Version, Kind: Kind}

// Owned are the kinds the controller writes for an InferenceSLO.
var Owned = []schema.GroupVersionKind{
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"},
	{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"},
}

// outputs are the compile output folders the controller applies.
var outputs = []string{"kubernetes", "keda"}

// Options are what compile's flags set for the objects.
type Options struct {
	// Labels go on every PrometheusRule (a Prometheus' ruleSelector).
	Labels map[string]string
	// Catalog is the engine catalog; nil: the built-in one.
	Catalog *engine.Catalog
}

// Desired is what one InferenceSLO yields.
type Desired struct {
	// Source is the spec file the object stands for: `inferslo validate`
	// or `compile` on these bytes reports and writes what the controller
	// does.
	Source spec.Source
	// Problems are validate's problems, warnings included.
	Problems spec.Problems
	// Files are compile's artifacts that the controller applies, and
	// Objects the objects they hold, in order.
	Files   artifact.Set
	Objects []*unstructured.Unstructured
}

// ErrInvalid says the spec has errors; Desired.Problems holds them.
var ErrInvalid = errors.New("invalid spec")

// SourceName names an InferenceSLO's spec in messages and generated
// headers.
func SourceName(namespace, name string) string {
	return sourceName(Kind, namespace, name)
}

// sourceName names an object's spec: kind/namespace/name, the kind in
// lower case.
func sourceName(kind, namespace, name string) string {
	return strings.ToLower(kind) + "/" + namespace + "/" + name
}

// SourceOf is the spec file form of an object (spec.FileDocument): what
// `inferslo validate` and `compile` read for it.
func SourceOf(obj *unstructured.Unstructured) (spec.Source, error) {
	name := sourceName(obj.GetKind(), obj.GetNamespace(), obj.GetName())
	doc, err := spec.FileDocument(obj.Object)
	if err != nil {
		return spec.Source{}, fmt.Errorf("%s: %w", name, err)
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return spec.Source{}, fmt.Errorf("%s: %w", name, err)
	}
	return spec.Source{Name: name, Data: data}, nil
}

// Build runs validate and compile on an InferenceSLO: the same loader,
// checks and backends as the command line, in the object's namespace.
// ErrInvalid means the problems hold errors; any other error is not the
// spec's.
func Build(obj *unstructured.Unstructured, opts Options) (Desired, error) {
	return build([]*unstructured.Unstructured{obj}, obj.GetNamespace(), opts)
}

// build runs validate and compile on the objects of one namespace, each
// one spec file, as `inferslo compile` on those files does.
func build(objs []*unstructured.Unstructured, namespace string, opts Options) (Desired, error) {
	var d Desired
	var sources []spec.Source
	for _, obj := range objs {
		src, err := SourceOf(obj)
		if err != nil {
			return d, err
		}
		sources = append(sources, src)
	}
	if len(sources) == 0 {
		return d, nil
	}
	d.Source = sources[0]
	cat := opts.Catalog
	if cat == nil {
		var err error
		if cat, err = engine.Load(); err != nil {
			return d, err
		}
	}
	res, err := spec.ParseWith(cat, sources...)
	if err != nil {
		return d, err
	}
	d.Problems = res.Problems
	if len(res.Problems.Errors()) > 0 {
		return d, ErrInvalid
	}
	if len(res.Set.SLOs) == 0 {
		d.Problems = append(d.Problems, spec.Problem{File: d.Source.Name, Path: "spec.objectives", Message: "no SLO found; an output needs at least one objective", Severity: spec.Error})
		return d, ErrInvalid
	}
	copts := compiler.Options{Kube: kube.Options{Namespace: namespace, Labels: opts.Labels}, Outputs: outputs, Parallel: 1}
	err = compiler.CompileTo(res.Set, copts, func(f artifact.File) error {
		d.Files = append(d.Files, f)
		return nil
	})
	if err != nil {
		// A backend never fails on a valid spec; say so at the object.
		d.Problems = append(d.Problems, spec.Problem{File: d.Source.Name, Path: "spec", Message: err.Error(), Severity: spec.Error})
		return d, ErrInvalid
	}
	d.Files.Sort()
	for _, f := range d.Files {
		objs, err := Objects(f.Data)
		if err != nil {
			return d, fmt.Errorf("%s: %w", f.Path, err)
		}
		for _, o := range objs {
			switch ns := o.GetNamespace(); {
			case ns == "":
				o.SetNamespace(namespace)
			case ns != namespace:
				d.Problems = append(d.Problems, spec.Problem{File: d.Source.Name, Path: "spec.autoscaling.namespace",
					Message: fmt.Sprintf("namespace %q is not the spec's (%q): the controller writes objects in the spec's own namespace; leave it out", ns, namespace), Severity: spec.Error})
				return d, ErrInvalid
			}
			d.Objects = append(d.Objects, o)
		}
	}
	return d, nil
}

// Objects reads the Kubernetes objects of a generated YAML file.
func Objects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}
