package spec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/OpenSLO/go-sdk/pkg/openslo"
	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	"github.com/OpenSLO/go-sdk/pkg/openslosdk"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/spec/engine"
	"github.com/inferslo/inferslo/spec/input"
)

// Export returns the specs as plain OpenSLO v1 YAML: shorthand documents
// expanded, OpenSLO objects as they are. The result passes go-sdk validation
// and compiles to the same rules as the input.
func Export(paths ...string) ([]byte, Problems, error) {
	objects, files, problems, err := exportObjects(paths)
	if err != nil || len(problems.Errors()) > 0 {
		return nil, problems, err
	}
	var buf bytes.Buffer
	buf.WriteString("# Plain OpenSLO v1 exported by inferslo from " + input.SourceList(files) + ".\n")
	if err := openslosdk.Encode(&buf, openslosdk.FormatYAML, objects...); err != nil {
		return nil, problems, fmt.Errorf("encode OpenSLO: %w", err)
	}
	return buf.Bytes(), problems, nil
}

// ExportCluster returns what Export does as Kubernetes objects of the
// openslo.com/v1 kinds in namespace (empty: kubectl's context), one YAML
// document each: `kubectl apply -f` creates them for the controller, which
// compiles them to what compile writes for the specs.
func ExportCluster(namespace string, paths ...string) ([]byte, Problems, error) {
	objects, files, problems, err := exportObjects(paths)
	if err != nil || len(problems.Errors()) > 0 {
		return nil, problems, err
	}
	var js bytes.Buffer
	if err := openslosdk.Encode(&js, openslosdk.FormatJSON, objects...); err != nil {
		return nil, problems, fmt.Errorf("encode OpenSLO: %w", err)
	}
	var docs []map[string]any
	if err := json.Unmarshal(js.Bytes(), &docs); err != nil {
		return nil, problems, fmt.Errorf("encode OpenSLO: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString("# OpenSLO v1 as Kubernetes objects, exported by inferslo from " + input.SourceList(files) + ".\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, d := range docs {
		obj, err := ClusterObject(d, namespace)
		if err != nil {
			return nil, problems, err
		}
		if err := enc.Encode(obj); err != nil {
			return nil, problems, fmt.Errorf("encode object: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, problems, fmt.Errorf("encode object: %w", err)
	}
	return buf.Bytes(), problems, nil
}

// exportObjects loads the specs and returns their OpenSLO objects, valid
// by go-sdk, in input order.
func exportObjects(paths []string) ([]openslo.Object, []string, Problems, error) {
	sources, err := ReadFiles(paths...)
	if err != nil {
		return nil, nil, nil, err
	}
	cat, err := engine.Load()
	if err != nil {
		return nil, nil, nil, err
	}
	l := newLoader(cat)
	var files []string
	for _, s := range sources {
		l.addFile(s.Name, s.Data)
		files = append(files, s.Name)
	}
	l.resolve()
	l.problems.sort()
	if len(l.problems.Errors()) > 0 {
		return nil, files, l.problems, nil
	}
	if err := openslosdk.Validate(l.objects...); err != nil {
		return nil, files, l.problems, fmt.Errorf("exported objects do not validate: %w", err)
	}
	dropZeroAlertAfter(l.objects)
	return l.objects, files, l.problems, nil
}

// dropZeroAlertAfter leaves out every alertAfter of zero ("0m"): the SDK
// writes it as an empty string its own validation refuses, and a condition
// without alertAfter compiles to the same alert.
func dropZeroAlertAfter(objects []openslo.Object) {
	condition := func(s *v1.AlertConditionSpec) {
		if a := s.Condition.AlertAfter; a != nil && a.GetValue() == 0 {
			s.Condition.AlertAfter = nil
		}
	}
	policy := func(s *v1.AlertPolicySpec) {
		for _, c := range s.Conditions {
			if c.AlertPolicyConditionInline != nil {
				condition(&c.AlertPolicyConditionInline.Spec)
			}
		}
	}
	for i, o := range objects {
		switch o := o.(type) {
		case v1.AlertCondition:
			condition(&o.Spec)
			objects[i] = o
		case v1.AlertPolicy:
			policy(&o.Spec)
		case v1.SLO:
			for _, p := range o.Spec.AlertPolicies {
				if p.SLOAlertPolicyInline != nil {
					policy(&p.SLOAlertPolicyInline.Spec)
				}
			}
		}
	}
}
