package controller

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/grafana"
	"github.com/inferslo/inferslo/compiler/kube"
	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/engine"
)

// GVK is the InferenceSLO kind in a cluster.
var GVK = schema.GroupVersionKind{Group: Group, Version: Version, Kind: Kind}

// Owned are the kinds the controller writes for a spec.
var Owned = []schema.GroupVersionKind{
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"},
	{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"},
	ConfigMapGVK,
}

// ConfigMapGVK is the kind a dashboard is applied as.
var ConfigMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// DefaultDashboardLabel is the label Grafana's dashboard sidecar (the
// Grafana Helm chart's, kube-prometheus-stack's) looks for by default.
var DefaultDashboardLabel = map[string]string{"grafana_dashboard": "1"}

// outputs are the compile output folders the controller applies; grafana
// joins them when dashboards are written.
var outputs = []string{"kubernetes", "keda"}

// Options are what compile's flags set for the objects.
type Options struct {
	// Labels go on every PrometheusRule (a Prometheus' ruleSelector).
	Labels map[string]string
	// Catalog is the engine catalog; nil: the built-in one.
	Catalog *engine.Catalog
	// DashboardLabels, when set, write each service's Grafana dashboard
	// (compile's grafana/<service>.json) as a ConfigMap with these labels,
	// for Grafana's dashboard sidecar (DefaultDashboardLabel).
	DashboardLabels map[string]string
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
	outs := outputs
	if len(opts.DashboardLabels) > 0 {
		outs = append(slices.Clone(outputs), "grafana")
	}
	copts := compiler.Options{Kube: kube.Options{Namespace: namespace, Labels: opts.Labels}, Outputs: outs, Parallel: 1}
	err = compiler.CompileTo(res.Set, copts, func(f artifact.File) error {
		// The overview lists every SLO compile reads; in a cluster each
		// spec (or namespace) is compiled alone, so it is not applied.
		if f.Path != grafana.OverviewPath {
			d.Files = append(d.Files, f)
		}
		return nil
	})
	if err != nil {
		// A backend never fails on a valid spec; say so at the object.
		d.Problems = append(d.Problems, spec.Problem{File: d.Source.Name, Path: "spec", Message: err.Error(), Severity: spec.Error})
		return d, ErrInvalid
	}
	d.Files.Sort()
	for _, f := range d.Files {
		if strings.HasPrefix(f.Path, "grafana/") {
			d.Objects = append(d.Objects, dashboardConfigMap(f, namespace, opts.DashboardLabels))
			continue
		}
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

// dashboardConfigMap holds a service's dashboard file, byte for byte, under
// its file name: Grafana's sidecar writes each key as a file Grafana
// provisions.
func dashboardConfigMap(f artifact.File, namespace string, labels map[string]string) *unstructured.Unstructured {
	key := path.Base(f.Path)
	name := strings.NewReplacer("_", "-", ".", "-").Replace(strings.ToLower(strings.TrimSuffix(key, ".json")))
	o := newObject(ConfigMapGVK)
	o.SetName("inferslo-dashboard-" + name)
	o.SetNamespace(namespace)
	o.SetLabels(maps.Clone(labels))
	o.Object["data"] = map[string]any{key: string(f.Data)}
	return o
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
