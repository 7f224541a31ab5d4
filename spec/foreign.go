package spec

import "gopkg.in/yaml.v3"

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
