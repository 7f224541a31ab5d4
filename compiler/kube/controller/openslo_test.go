package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/kube"
	"github.com/inferslo/inferslo/compiler/kube/crdschema"
	"github.com/inferslo/inferslo/spec"
)

// clusterObjects reads spec file documents (OpenSLO or export's cluster
// form) as the objects kubectl creates from them in namespace.
func clusterObjects(t *testing.T, data []byte, namespace string) []*unstructured.Unstructured {
	t.Helper()
	docs, err := Objects(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, d := range docs {
		m := d.Object
		if d.GetAPIVersion() != spec.OpenSLOClusterAPIVersion {
			if m, err = spec.ClusterObject(d.Object, namespace); err != nil {
				t.Fatal(err)
			}
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetNamespace(namespace)
		u.SetUID(types.UID("uid-" + strings.ToLower(u.GetKind()) + "-" + u.GetName()))
		u.SetGeneration(1)
		out = append(out, u)
	}
	return out
}

// openSLOSpecs are the examples as objects: the plain OpenSLO files as
// kubectl would create them, and every other example as `inferslo export
// --kubernetes` prints it.
func openSLOSpecs(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	out := map[string][]*unstructured.Unstructured{}
	plain, err := filepath.Glob("../../../examples/openslo/*.yaml")
	if err != nil || len(plain) < 2 {
		t.Fatalf("openslo examples %v: %v", plain, err)
	}
	for _, p := range plain {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = clusterObjects(t, data, "llm")
	}
	for _, p := range shorthandExamples(t) {
		data, problems, err := spec.ExportCluster("llm", p)
		if err != nil || len(problems.Errors()) > 0 {
			t.Fatalf("%s: export: %v %s", p, err, problems.Report())
		}
		out[p] = clusterObjects(t, data, "llm")
	}
	return out
}

func TestEveryOpenSLOExampleIsObjectsTheCRDsAccept(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{}
	for _, k := range Kinds {
		crd, err := k.CRD()
		if err != nil {
			t.Fatal(err)
		}
		s, err := crdschema.Compile(crd, k.Version, true)
		if err != nil {
			t.Fatalf("%s: %v", k.Kind, err)
		}
		schemas[k.GVK().GroupVersion().String()+"/"+k.Kind] = s
	}
	n := 0
	for p, objs := range openSLOSpecs(t) {
		for _, o := range objs {
			s := schemas[o.GetAPIVersion()+"/"+o.GetKind()]
			if s == nil {
				t.Fatalf("%s: no CRD for %s %s", p, o.GetAPIVersion(), o.GetKind())
			}
			c := o.DeepCopy()
			unstructured.RemoveNestedField(c.Object, "metadata", "uid")
			unstructured.RemoveNestedField(c.Object, "metadata", "generation")
			data, err := json.Marshal(c.Object)
			if err != nil {
				t.Fatal(err)
			}
			if err := crdschema.Validate(s, data); err != nil {
				t.Errorf("%s: %s %s: %v", p, o.GetKind(), o.GetName(), err)
			}
			n++
		}
	}
	t.Logf("%d objects", n)
}

// TestANamespacesOpenSLOObjectsYieldWhatCompileWritesForTheirFile builds
// each example's objects as the controller does (each object one spec,
// from the file form spec.FileDocument gives back) and compiles the file
// as compile does: the files are the same but for the header naming the
// sources.
func TestANamespacesOpenSLOObjectsYieldWhatCompileWritesForTheirFile(t *testing.T) {
	for p, objs := range openSLOSpecs(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			res, err := spec.Load(p)
			if err != nil || res.Err() != nil {
				t.Fatalf("%v %v", err, res.Err())
			}
			out, err := compiler.Compile(res.Set, compiler.Options{Kube: kube.Options{Namespace: "llm"}, Outputs: outputs})
			if err != nil {
				t.Fatal(err)
			}
			d, err := BuildOpenSLO(objs, "llm", Options{})
			if err != nil {
				t.Fatalf("%v\n%s", err, d.Problems.Report())
			}
			if len(d.Files) != len(out.Files) || len(d.Files) == 0 {
				t.Fatalf("%d files from the objects, %d from the file", len(d.Files), len(out.Files))
			}
			for i, f := range out.Files {
				if f.Path != d.Files[i].Path || stripHeader(string(d.Files[i].Data)) != stripHeader(string(f.Data)) {
					t.Errorf("%s differs from compile's %s:\n%s\n---\n%s", d.Files[i].Path, f.Path, d.Files[i].Data, f.Data)
				}
			}
		})
	}
}

func newOpenSLOClient(objs ...*unstructured.Unstructured) client.WithWatch {
	var cobjs []client.Object
	for _, o := range objs {
		cobjs = append(cobjs, o.DeepCopy())
	}
	b := newClientBuilder().WithObjects(cobjs...).WithStatusSubresource(newObject(GVK))
	for _, gvk := range OpenSLOKinds() {
		b = b.WithStatusSubresource(newObject(gvk))
	}
	return b.Build()
}

func sloReady(t *testing.T, c client.Client, name string) metav1.Condition {
	t.Helper()
	obj := newObject(SLOGVK)
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "llm", Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	cond := readyOf(obj)
	if cond == nil {
		t.Fatalf("no Ready condition on SLO %s: %v", name, obj.Object["status"])
	}
	return *cond
}

func TestTheOpenSLOReconcilerAppliesPrunesAndReportsOnTheSLOs(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("../../../examples/openslo/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs := clusterObjects(t, data, "llm")
	c := newOpenSLOClient(objs...)
	events := record.NewFakeRecorder(20)
	r := &OpenSLOReconciler{Client: c, Events: events, Options: Options{DashboardLabels: map[string]string{"dashboards": "slo"}}}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "llm", Name: OpenSLORequestName}}
	rule := types.NamespacedName{Namespace: "llm", Name: "inferslo-llm-gateway"}

	t.Run("the namespace's objects yield compile's PrometheusRule, owned by the SLO", func(t *testing.T) {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if cond := sloReady(t, c, "gateway-availability"); cond.Status != metav1.ConditionTrue || cond.Reason != ReasonApplied {
			t.Fatalf("ready = %+v", cond)
		}
		d, err := BuildOpenSLO(objs, "llm", Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := newObject(Owned[0])
		if err := c.Get(ctx, rule, got); err != nil {
			t.Fatal(err)
		}
		if g, w := jsonOf(t, got.Object["spec"]), jsonOf(t, d.Objects[0].Object["spec"]); g != w {
			t.Errorf("applied spec differs from compile's")
		}
		if ref := metav1.GetControllerOf(got); ref == nil || ref.Kind != "SLO" || ref.Name != "gateway-availability" {
			t.Errorf("controller owner %+v", ref)
		}
		cm := newObject(ConfigMapGVK)
		if err := c.Get(ctx, types.NamespacedName{Namespace: "llm", Name: "inferslo-dashboard-llm-gateway"}, cm); err != nil {
			t.Fatal(err)
		}
		want := compiledDashboard(t, "../../../examples/openslo/gateway.yaml", "llm-gateway", "")
		js, _ := cm.Object["data"].(map[string]any)["llm-gateway.json"].(string)
		if stripDescription(js) != stripDescription(want) || cm.GetLabels()["dashboards"] != "slo" {
			t.Errorf("dashboard ConfigMap labelled %v is not compile's dashboard", cm.GetLabels())
		}
		if e := <-events.Events; !strings.HasPrefix(e, "Normal Applied 2 objects applied") {
			t.Errorf("event %q", e)
		}
	})

	t.Run("an SLI changed to a bad query leaves the rule and says where on the SLO", func(t *testing.T) {
		sli := newObject(objs[2].GroupVersionKind())
		if err := c.Get(ctx, types.NamespacedName{Namespace: "llm", Name: "completions-availability"}, sli); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(sli.Object, "sum(http_requests_total{", "spec", "ratioMetric", "total", "metricSource", "spec", "query"); err != nil {
			t.Fatal(err)
		}
		if err := c.Update(ctx, sli); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		cond := sloReady(t, c, "gateway-availability")
		if cond.Status != metav1.ConditionFalse || cond.Reason != ReasonInvalidSpec || !strings.Contains(cond.Message, "sli/llm/completions-availability:") || !strings.Contains(cond.Message, "spec.ratioMetric.total.metricSource.spec.query") {
			t.Fatalf("ready = %+v", cond)
		}
		if err := c.Get(ctx, rule, newObject(Owned[0])); err != nil {
			t.Errorf("the rule went with a bad spec: %v", err)
		}
	})

	t.Run("with its SLO deleted the namespace's PrometheusRule and dashboard are pruned", func(t *testing.T) {
		if err := c.Delete(ctx, objs[3].DeepCopy()); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if n, m := count(t, c, 0), count(t, c, 2); n != 0 || m != 0 {
			t.Errorf("%d PrometheusRules, %d ConfigMaps left", n, m)
		}
	})
}

var generatedFrom = regexp.MustCompile(`Code generated by inferslo from .*?\. DO NOT EDIT`)

// stripDescription drops the spec files a dashboard names (one per object
// in a cluster).
func stripDescription(s string) string {
	return generatedFrom.ReplaceAllString(s, "Code generated by inferslo from the specs. DO NOT EDIT")
}

func TestExportedObjectsReadBackAsTheirFiles(t *testing.T) {
	data, problems, err := spec.ExportCluster("", "../../../examples/chat.yaml")
	if err != nil || len(problems.Errors()) > 0 {
		t.Fatal(err, problems.Report())
	}
	if bytes.Contains(data, []byte("openslo/v1\n")) || !bytes.Contains(data, []byte("apiVersion: openslo.com/v1\n")) {
		t.Errorf("not the cluster form:\n%s", data)
	}
	for _, o := range clusterObjects(t, data, "llm") {
		doc, err := spec.FileDocument(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		if doc["apiVersion"] != "openslo/v1" || doc["metadata"].(map[string]any)["namespace"] != nil {
			t.Errorf("%s %s: file form %v", o.GetKind(), o.GetName(), doc["metadata"])
		}
	}
}
