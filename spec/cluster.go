package spec

import (
	"fmt"
	"strings"

	"github.com/OpenSLO/go-sdk/pkg/openslo"
)

// The cluster form of spec documents: the same kinds and specs as
// Kubernetes objects, in API groups (which must be DNS names) and with
// Kubernetes metadata. FileDocument and ClusterObject turn one form into
// the other, so the controller hands spec the documents the command line
// reads, and export writes objects kubectl applies.
const (
	OpenSLOGroup               = "openslo.com"
	OpenSLOVersion             = "v1"
	OpenSLOClusterAPIVersion   = OpenSLOGroup + "/" + OpenSLOVersion
	ShorthandClusterAPIVersion = "inferslo.dev/v1alpha1"
	// DisplayNameAnnotation holds metadata.displayName in the cluster,
	// whose metadata has no such field.
	DisplayNameAnnotation = "openslo.com/display-name"
)

// clusterVersions maps a cluster apiVersion to the file form's.
var clusterVersions = map[string]string{
	ShorthandClusterAPIVersion: ShorthandAPIVersion,
	OpenSLOClusterAPIVersion:   string(openslo.VersionV1),
}

// specAnnotation says whether an annotation is the spec's (an inferslo.dev/
// extension) rather than the cluster's or a tool's (kubectl's, Argo CD's).
func specAnnotation(key string) bool {
	return strings.HasPrefix(key, "inferslo.dev/")
}

// FileDocument is the spec file form of a cluster object: the file form's
// apiVersion, the kind and spec, metadata.name, metadata.displayName from
// DisplayNameAnnotation and the inferslo.dev/ annotations. The rest of the
// metadata (namespace, labels, other annotations, uid) is the cluster's.
func FileDocument(obj map[string]any) (map[string]any, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	version, ok := clusterVersions[apiVersion]
	if !ok {
		return nil, fmt.Errorf("apiVersion %q is not a spec kind's in a cluster; valid: %s, %s", apiVersion, ShorthandClusterAPIVersion, OpenSLOClusterAPIVersion)
	}
	meta, _ := obj["metadata"].(map[string]any)
	fileMeta := map[string]any{"name": meta["name"]}
	ann := map[string]any{}
	in, _ := meta["annotations"].(map[string]any)
	for k, v := range in {
		switch {
		case k == DisplayNameAnnotation:
			fileMeta["displayName"] = v
		case specAnnotation(k):
			ann[k] = v
		}
	}
	if len(ann) > 0 {
		fileMeta["annotations"] = ann
	}
	doc := map[string]any{"apiVersion": version, "kind": obj["kind"], "metadata": fileMeta}
	if s, ok := obj["spec"]; ok {
		doc["spec"] = s
	}
	return doc, nil
}

// ClusterObject is the cluster form of a spec file document in namespace
// (empty: kubectl's context). Labels are dropped: no output reads them, and
// OpenSLO's (lists of values) are not Kubernetes'.
func ClusterObject(doc map[string]any, namespace string) (map[string]any, error) {
	apiVersion, _ := doc["apiVersion"].(string)
	var version string
	for cluster, file := range clusterVersions {
		if file == apiVersion {
			version = cluster
		}
	}
	if version == "" {
		return nil, fmt.Errorf("apiVersion %q has no cluster form; valid: %s, %s", apiVersion, ShorthandAPIVersion, openslo.VersionV1)
	}
	meta, _ := doc["metadata"].(map[string]any)
	objMeta := map[string]any{"name": meta["name"]}
	if namespace != "" {
		objMeta["namespace"] = namespace
	}
	ann := map[string]any{}
	in, _ := meta["annotations"].(map[string]any)
	for k, v := range in {
		if specAnnotation(k) {
			ann[k] = v
		}
	}
	if dn, ok := meta["displayName"].(string); ok && dn != "" {
		ann[DisplayNameAnnotation] = dn
	}
	if len(ann) > 0 {
		objMeta["annotations"] = ann
	}
	obj := map[string]any{"apiVersion": version, "kind": doc["kind"], "metadata": objMeta}
	if s, ok := doc["spec"]; ok {
		obj["spec"] = s
	}
	return obj, nil
}
