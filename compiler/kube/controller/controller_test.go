package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/kube"
	"github.com/inferslo/inferslo/compiler/kube/crdschema"
	"github.com/inferslo/inferslo/spec"
)

var update = flag.Bool("update", false, "rewrite the committed CRD from the Go types")

func TestEveryCommittedCRDIsGeneratedFromItsDecodersTypes(t *testing.T) {
	committed, err := CommittedCRDs()
	if err != nil && !*update {
		t.Fatal(err)
	}
	for i, k := range Kinds {
		got, err := k.CRD()
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(k.Path(), got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !bytes.Equal(got, committed[i]) {
			t.Errorf("%s drifted from %s; read the change, then go test ./compiler/kube/controller -run CRD -update rewrites it:\n--- generated\n%s", k.Path(), k.Spec, got)
		}
	}
}

// exampleObject reads a shorthand spec file as the InferenceSLO object
// kubectl would create from it in namespace (spec.ClusterObject).
func exampleObject(t *testing.T, path, namespace string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return objectOf(t, data, namespace)
}

func objectOf(t *testing.T, data []byte, namespace string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m, err := spec.ClusterObject(m, namespace)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetUID(types.UID("uid-" + u.GetName()))
	u.SetGeneration(1)
	return u
}

func shorthandExamples(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../../../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("kind: InferenceSLO")) && !bytes.Contains(data, []byte("\n---")) {
			out = append(out, p)
		}
	}
	if len(out) < 3 {
		t.Fatalf("found %d shorthand examples", len(out))
	}
	return out
}

func TestEveryShorthandExampleIsAnObjectTheCRDAccepts(t *testing.T) {
	crd, err := Kinds[0].CRD()
	if err != nil {
		t.Fatal(err)
	}
	s, err := crdschema.Compile(crd, Version, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range shorthandExamples(t) {
		obj := exampleObject(t, p, "llm")
		unstructured.RemoveNestedField(obj.Object, "metadata", "uid")
		unstructured.RemoveNestedField(obj.Object, "metadata", "generation")
		data, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		if err := crdschema.Validate(s, data); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestAnObjectYieldsWhatCompileWritesForItsFile compiles each example file
// as compile does and builds the same spec as an object: the PrometheusRule
// and ScaledObject files are byte for byte the same but for the header
// naming the source.
func TestAnObjectYieldsWhatCompileWritesForItsFile(t *testing.T) {
	for _, p := range shorthandExamples(t) {
		res, err := spec.Load(p)
		if err != nil || res.Err() != nil {
			t.Fatalf("%s: %v %v", p, err, res.Err())
		}
		out, err := compiler.Compile(res.Set, compiler.Options{Kube: kube.Options{Namespace: "llm"}, Outputs: outputs})
		if err != nil {
			t.Fatal(err)
		}
		d, err := Build(exampleObject(t, p, "llm"), Options{})
		if err != nil {
			t.Fatalf("%s: %v\n%s", p, err, d.Problems.Report())
		}
		if len(d.Files) != len(out.Files) || len(d.Files) == 0 {
			t.Fatalf("%s: %d files from the object, %d from the file", p, len(d.Files), len(out.Files))
		}
		for i, f := range out.Files {
			want := strings.ReplaceAll(string(f.Data), strings.TrimPrefix(p, "../../../"), sourceName(Kind, "llm", strings.TrimSuffix(filepath.Base(p), ".yaml")))
			got := string(d.Files[i].Data)
			if f.Path != d.Files[i].Path || got != want {
				// The header names the file, and the object's name may differ from the file's.
				if stripHeader(got) != stripHeader(string(f.Data)) {
					t.Errorf("%s: %s differs from compile's %s:\n%s\n---\n%s", p, d.Files[i].Path, f.Path, got, f.Data)
				}
			}
		}
	}
}

func stripHeader(s string) string {
	_, rest, _ := strings.Cut(s, "\n")
	return rest
}

const badSpec = `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata:
  name: chat
spec:
  engine: vllm
  window: 28d
  objectives:
    - sli: ttft
      threshold: 300ms
      target: 99%
`

func newClientBuilder() *fake.ClientBuilder {
	return fake.NewClientBuilder().WithScheme(runtime.NewScheme())
}

func newClient(objs ...client.Object) client.WithWatch {
	return newClientBuilder().WithObjects(objs...).WithStatusSubresource(newObject(GVK)).Build()
}

func ready(t *testing.T, c client.Client, name string) metav1.Condition {
	t.Helper()
	obj := newObject(GVK)
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "llm", Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == ConditionReady {
			var cond metav1.Condition
			b, _ := json.Marshal(m)
			if err := json.Unmarshal(b, &cond); err != nil {
				t.Fatal(err)
			}
			return cond
		}
	}
	t.Fatalf("no Ready condition in %v", obj.Object["status"])
	return metav1.Condition{}
}

func count(t *testing.T, c client.Client, kind int) int {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(Owned[kind].GroupVersion().WithKind(Owned[kind].Kind + "List"))
	if err := c.List(context.Background(), list, client.InNamespace("llm")); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func TestReconcileAppliesUpdatesAndReportsTheSpec(t *testing.T) {
	ctx := context.Background()
	obj := exampleObject(t, "../../../examples/chat.yaml", "llm")
	c := newClient(obj.DeepCopy())
	events := record.NewFakeRecorder(10)
	r := &Reconciler{Client: c, Events: events}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "llm", Name: "chat"}}

	t.Run("a new spec yields its PrometheusRule and ScaledObject, owned by it", func(t *testing.T) {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if cond := ready(t, c, "chat"); cond.Status != metav1.ConditionTrue || cond.Reason != ReasonApplied {
			t.Fatalf("ready = %+v", cond)
		}
		d, err := Build(obj, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range d.Objects {
			got := newObject(want.GroupVersionKind())
			if err := c.Get(ctx, types.NamespacedName{Namespace: "llm", Name: want.GetName()}, got); err != nil {
				t.Fatal(err)
			}
			if g, w := jsonOf(t, got.Object["spec"]), jsonOf(t, want.Object["spec"]); g != w {
				t.Errorf("%s %s: applied spec differs from compile's", want.GetKind(), want.GetName())
			}
			if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != obj.GetUID() || ref.Kind != Kind {
				t.Errorf("%s %s: controller owner %+v", want.GetKind(), want.GetName(), ref)
			}
		}
		if count(t, c, 0) != 1 || count(t, c, 1) != 1 {
			t.Fatalf("%d PrometheusRules, %d ScaledObjects", count(t, c, 0), count(t, c, 1))
		}
		if e := <-events.Events; e != "Normal Applied 2 objects applied" {
			t.Errorf("event %q", e)
		}
	})

	t.Run("a reconcile of an unchanged spec writes nothing", func(t *testing.T) {
		before, after := newObject(Owned[0]), newObject(Owned[0])
		key := types.NamespacedName{Namespace: "llm", Name: "inferslo-chat"}
		if err := c.Get(ctx, key, before); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, key, after); err != nil {
			t.Fatal(err)
		}
		if before.GetResourceVersion() != after.GetResourceVersion() {
			t.Errorf("resource version %s became %s", before.GetResourceVersion(), after.GetResourceVersion())
		}
		if len(events.Events) != 0 {
			t.Errorf("event %q for nothing new", <-events.Events)
		}
	})

	t.Run("removing the autoscaling section deletes the ScaledObject", func(t *testing.T) {
		cur := newObject(GVK)
		if err := c.Get(ctx, req.NamespacedName, cur); err != nil {
			t.Fatal(err)
		}
		unstructured.RemoveNestedField(cur.Object, "spec", "autoscaling")
		if err := c.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if count(t, c, 0) != 1 || count(t, c, 1) != 0 {
			t.Fatalf("%d PrometheusRules, %d ScaledObjects", count(t, c, 0), count(t, c, 1))
		}
	})

	t.Run("a spec with errors is Ready=False with validate's located messages", func(t *testing.T) {
		bad := objectOf(t, []byte(badSpec), "llm")
		bad.SetName("bad")
		if err := c.Create(ctx, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "llm", Name: "bad"}}); err != nil {
			t.Fatal(err)
		}
		cond := ready(t, c, "bad")
		d, _ := Build(bad, Options{})
		if cond.Status != metav1.ConditionFalse || cond.Reason != ReasonInvalidSpec || cond.Message != d.Problems.Errors().Report() {
			t.Fatalf("ready = %+v", cond)
		}
		if e := <-events.Events; !strings.HasPrefix(e, "Warning InvalidSpec inferenceslo/llm/bad:") {
			t.Errorf("event %q", e)
		}
		if !strings.Contains(cond.Message, "inferenceslo/llm/bad:") || !strings.Contains(cond.Message, "spec.objectives[0].threshold") {
			t.Errorf("message is not located: %s", cond.Message)
		}
	})
}

func TestDryRunWritesWhatItWouldApply(t *testing.T) {
	obj := exampleObject(t, "../../../examples/chat.yaml", "llm")
	c := newClient(obj.DeepCopy())
	bad := objectOf(t, []byte(badSpec), "llm")
	bad.SetName("bad")
	if err := c.Create(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	gateway, err := os.ReadFile("../../../examples/openslo/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range clusterObjects(t, gateway, "llm") {
		if err := c.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	var reported []string
	names, err := DryRun(context.Background(), c, "llm", dir, true, Options{}, func(name, msg string) { reported = append(reported, name+": "+msg) })
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "bad" || len(reported) != 1 || !strings.Contains(reported[0], "spec.objectives[0].threshold") {
		t.Errorf("specs with problems %v, reported %q", names, reported)
	}
	for _, p := range []string{"PrometheusRule/llm/inferslo-chat.yaml", "ScaledObject/llm/chat.yaml", "PrometheusRule/llm/inferslo-llm-gateway.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Error(err)
		}
	}
	if n := count(t, c, 0); n != 0 {
		t.Errorf("dry run applied %d PrometheusRules", n)
	}
}

func review(t *testing.T, h http.Handler, obj *unstructured.Unstructured) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	in := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &admissionv1.AdmissionRequest{UID: "req-1", Operation: admissionv1.Create, Namespace: "llm", Object: runtime.RawExtension{Raw: raw}},
	}
	body, _ := json.Marshal(in)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, WebhookPath, bytes.NewReader(body)))
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("response %d %s: %v", rec.Code, rec.Body, err)
	}
	if out.Response.UID != "req-1" {
		t.Errorf("response uid %q", out.Response.UID)
	}
	return out.Response
}

func TestTheWebhookRefusesABadSpecWithValidatesMessage(t *testing.T) {
	var h Webhook
	if resp := review(t, h, exampleObject(t, "../../../examples/chat.yaml", "llm")); !resp.Allowed {
		t.Fatalf("a valid spec was refused: %+v", resp.Result)
	}
	bad := objectOf(t, []byte(badSpec), "llm")
	resp := review(t, h, bad)
	if resp.Allowed {
		t.Fatal("a threshold off the histogram's buckets was allowed")
	}
	src, err := SourceOf(bad)
	if err != nil {
		t.Fatal(err)
	}
	res, err := spec.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if want := res.Problems.Errors().Report(); resp.Result.Message != want || want == "" {
		t.Errorf("message:\n%s\nwant validate's:\n%s", resp.Result.Message, want)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTheWebhookAnswersWhatIsNotAReviewWithBadRequest(t *testing.T) {
	for name, body := range map[string]string{
		"a body that is not JSON":  "{",
		"a review with no request": `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`,
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Webhook{}.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, WebhookPath, strings.NewReader(body)))
			if rec.Code != http.StatusBadRequest {
				t.Errorf("status %d", rec.Code)
			}
		})
	}
	t.Run("an object that is not an object is refused, not a panic", func(t *testing.T) {
		resp := Webhook{}.Review(&admissionv1.AdmissionRequest{UID: "2", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(`[1]`)}})
		if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusBadRequest {
			t.Errorf("response %+v", resp)
		}
	})
}
