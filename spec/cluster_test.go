package spec

import (
	"reflect"
	"strings"
	"testing"
)

func TestTheClusterFormRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name      string
		doc, want map[string]any // want: the cluster object
	}{
		{
			name: "an OpenSLO SLO moves to openslo.com/v1 with its display name in an annotation and its labels dropped",
			doc: map[string]any{"apiVersion": "openslo/v1", "kind": "SLO", "spec": map[string]any{"service": "chat"},
				"metadata": map[string]any{"name": "chat-ttft", "displayName": "Chat TTFT", "labels": map[string]any{"team": []any{"a", "b"}},
					"annotations": map[string]any{"inferslo.dev/engine": "vllm", "owner": "x"}}},
			want: map[string]any{"apiVersion": "openslo.com/v1", "kind": "SLO", "spec": map[string]any{"service": "chat"},
				"metadata": map[string]any{"name": "chat-ttft", "namespace": "llm",
					"annotations": map[string]any{"inferslo.dev/engine": "vllm", DisplayNameAnnotation: "Chat TTFT"}}},
		},
		{
			name: "the shorthand moves to inferslo.dev/v1alpha1",
			doc:  map[string]any{"apiVersion": ShorthandAPIVersion, "kind": ShorthandKind, "metadata": map[string]any{"name": "chat"}, "spec": map[string]any{"engine": "vllm"}},
			want: map[string]any{"apiVersion": ShorthandClusterAPIVersion, "kind": ShorthandKind, "metadata": map[string]any{"name": "chat", "namespace": "llm"}, "spec": map[string]any{"engine": "vllm"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := ClusterObject(tc.doc, "llm")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(obj, tc.want) {
				t.Fatalf("cluster object %v\nwant %v", obj, tc.want)
			}
			back, err := FileDocument(obj)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.doc
			if m := want["metadata"].(map[string]any); m["labels"] != nil {
				// Labels and the cluster's annotations are not the spec's.
				want = map[string]any{"apiVersion": want["apiVersion"], "kind": want["kind"], "spec": want["spec"], "metadata": map[string]any{
					"name": m["name"], "displayName": m["displayName"], "annotations": map[string]any{"inferslo.dev/engine": "vllm"}}}
			}
			if !reflect.DeepEqual(back, want) {
				t.Errorf("file document %v\nwant %v", back, want)
			}
		})
	}
}

func TestAnAPIVersionWithNoOtherFormIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		conv func(map[string]any) (map[string]any, error)
		doc  map[string]any
	}{
		{"a file document of an older OpenSLO has no cluster form", func(d map[string]any) (map[string]any, error) { return ClusterObject(d, "") },
			map[string]any{"apiVersion": "openslo/v1alpha", "kind": "SLO", "metadata": map[string]any{"name": "a"}}},
		{"a cluster object of another group has no file form", FileDocument,
			map[string]any{"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": map[string]any{"name": "a"}}},
		{"an object with no apiVersion has no file form", FileDocument, map[string]any{"kind": "SLO"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.conv(tc.doc)
			if err == nil || !strings.Contains(err.Error(), "apiVersion") {
				t.Errorf("error %v", err)
			}
		})
	}
}
