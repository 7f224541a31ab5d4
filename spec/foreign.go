package spec

import (
	"slices"

	"gopkg.in/yaml.v3"
)

// Formats of other SLO tools that `inferslo import` converts.
const (
	SlothService = "Sloth service spec (version: prometheus/v1)"
	SlothCRD     = "Sloth PrometheusServiceLevel (sloth.slok.dev/v1)"
	PyrraSLO     = "Pyrra ServiceLevelObjective (pyrra.dev/v1alpha1)"
)

// Foreign names the other tool's format an object is written in (one of
// the constants above), or "" for anything else.
func Foreign(n *yaml.Node) string {
	get := func(key string) string {
		if c := child(n, key); c != nil && c.Kind == yaml.ScalarNode {
			return c.Value
		}
		return ""
	}
	switch {
	case get("version") == "prometheus/v1" && get("apiVersion") == "":
		return SlothService
	case get("apiVersion") == "sloth.slok.dev/v1" && get("kind") == "PrometheusServiceLevel":
		return SlothCRD
	case get("apiVersion") == "pyrra.dev/v1alpha1" && get("kind") == "ServiceLevelObjective":
		return PyrraSLO
	}
	return ""
}

// Doc is one object of a file in another tool's format, for readers that
// report located problems as spec does (inferslo import).
type Doc struct{ d *doc }

// SplitDocs parses a file into its objects: every YAML document, and every
// item of a document that is a list.
func SplitDocs(file string, data []byte) ([]Doc, Problems) {
	docs, ps := splitDocs(file, data)
	out := make([]Doc, len(docs))
	for i, d := range docs {
		out[i] = Doc{d}
	}
	return out, ps
}

// Node is the object's YAML node.
func (d Doc) Node() *yaml.Node { return d.d.node }

// Errorf is an error at a property path of the object.
func (d Doc) Errorf(path, format string, args ...any) Problem {
	return d.d.errorf(path, format, args...)
}

// Warnf is a warning at a property path of the object.
func (d Doc) Warnf(path, format string, args ...any) Problem { return d.d.warnf(path, format, args...) }

// NameProblem says why s cannot name an SLO or a service (a DNS label), or
// "" when it can.
func NameProblem(s string) string { return dnsLabelProblem(s) }

// ReservedGroupLabel tells whether inferslo sets the label on its own
// series and alerts, so that an SLO cannot be grouped by it.
func ReservedGroupLabel(name string) bool { return slices.Contains(reservedGroupLabels, name) }
