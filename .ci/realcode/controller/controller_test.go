package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	admissionv1 "k8s.io/api/admission/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apiextensions-apiserver/test/integration/fixtures"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/inferslo/inferslo/compiler/kube/controller"
	"github.com/inferslo/inferslo/spec"
)

const namespace = "llm"

// startEtcd runs etcd in process on free local ports.
func startEtcd(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(cfg.Dir, "etcd.log")}
	client, _ := url.Parse("http://127.0.0.1:0")
	peer, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		t.Fatal("etcd did not start in 60s")
	}
	return "http://" + e.Clients[0].Addr().String()
}

// startAPIServer runs the apiextensions API server over an in-process etcd
// and installs the CRDs.
func startAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	t.Setenv("KUBE_INTEGRATION_ETCD_URL", startEtcd(t))
	stop, cfg, _, err := fixtures.StartDefaultServer(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ours, err := manifestCRDs(t)
	if err != nil {
		t.Fatal(err)
	}
	keda, err := os.ReadFile("../../../compiler/keda/testdata/keda.sh_scaledobjects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile("../../../compiler/kube/testdata/monitoring.coreos.com_prometheusrules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range append(ours, keda, rules) {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &crd); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), &crd, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Fatalf("install %s: %v", crd.Name, err)
		}
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("crd %s not established: %v", crd.Name, err)
		}
		t.Logf("installed %s", crd.Name)
	}
	return cfg
}

// manifest is the install manifest `inferslo-controller --print-manifest`
// prints.
func manifest(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	data, err := controller.Manifest(controller.ManifestOptions{Namespace: namespace, Image: "example.com/inferslo-controller:ci", CertManager: true})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := controller.Objects(data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// manifestCRDs are the install manifest's CustomResourceDefinitions.
func manifestCRDs(t *testing.T) ([][]byte, error) {
	var out [][]byte
	for _, o := range manifest(t) {
		if o.GetKind() == "CustomResourceDefinition" {
			data, err := json.Marshal(o.Object)
			if err != nil {
				return nil, err
			}
			out = append(out, data)
		}
	}
	if len(out) != len(controller.Kinds) {
		t.Fatalf("%d CRDs in the manifest, %d kinds", len(out), len(controller.Kinds))
	}
	return out, nil
}

// object is a shorthand spec file as the InferenceSLO kubectl creates from
// it (spec.ClusterObject: the display name in its annotation).
func object(t *testing.T, path string) *unstructured.Unstructured {
	return objectIn(t, path, namespace)
}

func objectIn(t *testing.T, path, namespace string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m, err = spec.ClusterObject(m, namespace)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// compiled runs `inferslo compile` on the spec file, as CI does, and
// returns the objects of its kubernetes/ and keda/ files by kind and name.
func compiled(t *testing.T, spec, namespace string) map[string]*unstructured.Unstructured {
	t.Helper()
	bin := os.Getenv("INFERSLO_BIN")
	if bin == "" {
		t.Skip("INFERSLO_BIN is not set (.ci/run sets it)")
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "compile", spec, "-o", out, "--namespace", namespace, "--outputs", "kubernetes,keda")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("inferslo compile: %v\n%s", err, b)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*", "*.yaml"))
	objs := map[string]*unstructured.Unstructured{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		list, err := controller.Objects(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list {
			objs[o.GetKind()+"/"+o.GetName()] = o
		}
	}
	if len(objs) == 0 {
		t.Fatalf("compile wrote no objects: %v", files)
	}
	return objs
}

// heldAsCompiled fetches each object compile wrote from the server and
// reports where its spec or labels differ, returning what it fetched.
func heldAsCompiled(t *testing.T, c client.Client, ns string, want map[string]*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for key, w := range want {
		got, err := getIn(t, c, ns, w.GetAPIVersion(), w.GetKind(), w.GetName())
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if g, w := jsonOf(t, got.Object["spec"]), jsonOf(t, w.Object["spec"]); g != w {
			t.Errorf("%s: the server holds a spec other than compile's:\n%s\n%s", key, g, w)
		}
		if g, w := jsonOf(t, got.GetLabels()), jsonOf(t, w.GetLabels()); g != w {
			t.Errorf("%s: labels %s, compile's %s", key, g, w)
		}
		out[key] = got
	}
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func get(t *testing.T, c client.Client, apiVersion, kind, name string) (*unstructured.Unstructured, error) {
	return getIn(t, c, namespace, apiVersion, kind, name)
}

func getIn(t *testing.T, c client.Client, namespace, apiVersion, kind, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u, c.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: name}, u)
}

func ready(t *testing.T, c client.Client, name string) map[string]any {
	t.Helper()
	obj, err := get(t, c, controller.APIVersion, controller.Kind, name)
	if err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == controller.ConditionReady {
			return m
		}
	}
	t.Fatalf("no Ready condition: %v", obj.Object["status"])
	return nil
}

// newClient starts an API server and returns a client of it.
func newClient(t *testing.T) client.Client {
	t.Helper()
	cfg := startAPIServer(t)
	// The apiextensions server serves no core group, which discovery
	// asks for: the kinds are mapped here.
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, k := range controller.Kinds {
		mapper.Add(k.GVK(), meta.RESTScopeNamespace)
	}
	for _, gvk := range controller.Owned {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	c, err := client.New(cfg, client.Options{Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEveryShorthandExampleIsAppliedAsCompileWritesIt creates each
// shorthand example (and every spec in $INFERSLO_CONTROLLER_SPECS) as an
// object in a namespace of its own (its autoscaling namespace, if named)
// and checks the reconciled objects against compile's.
func TestEveryShorthandExampleIsAppliedAsCompileWritesIt(t *testing.T) {
	paths, _ := filepath.Glob("../../../examples/*.yaml")
	if dir := os.Getenv("INFERSLO_CONTROLLER_SPECS"); dir != "" {
		more, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		paths = append(paths, more...)
	}
	c := newClient(t)
	r := &controller.Reconciler{Client: c}
	ctx := context.Background()
	n := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("kind: InferenceSLO")) || bytes.Contains(data, []byte("\n---")) {
			continue
		}
		n++
		t.Run(filepath.Base(p), func(t *testing.T) {
			ns := "ex-" + strings.TrimSuffix(filepath.Base(p), ".yaml")
			probe := objectIn(t, p, ns)
			if a, ok, _ := unstructured.NestedString(probe.Object, "spec", "autoscaling", "namespace"); ok && a != "" {
				ns = a
			}
			obj := objectIn(t, p, ns)
			want := compiled(t, p, ns)
			if err := c.Create(ctx, obj, client.FieldValidation("Strict")); err != nil {
				t.Fatalf("create: %v", err)
			}
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: obj.GetName()}}); err != nil {
				t.Fatal(err)
			}
			heldAsCompiled(t, c, ns, want)
			t.Logf("%s: %d objects equal compile's", ns, len(want))
		})
	}
	if n < 3 {
		t.Fatalf("%d shorthand specs found", n)
	}
}

func TestTheControllerOnARealAPIServer(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	r := &controller.Reconciler{Client: c}
	const spec = "../../../examples/chat.yaml"
	want := compiled(t, spec, namespace)
	obj := object(t, spec)
	if err := c.Create(ctx, obj, client.FieldValidation("Strict")); err != nil {
		t.Fatalf("create InferenceSLO: %v", err)
	}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: obj.GetName()}}

	t.Run("a created InferenceSLO yields compile's PrometheusRule and ScaledObject, accepted strictly", func(t *testing.T) {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if cond := ready(t, c, obj.GetName()); cond["status"] != "True" {
			t.Fatalf("Ready: %v", cond)
		}
		for key, got := range heldAsCompiled(t, c, namespace, want) {
			if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != obj.GetUID() {
				t.Errorf("%s: controller owner %+v", key, ref)
			}
		}
		t.Logf("%d objects equal compile's", len(want))
	})

	t.Run("an update reconciles: the ScaledObject goes with the autoscaling section", func(t *testing.T) {
		cur, err := get(t, c, controller.APIVersion, controller.Kind, obj.GetName())
		if err != nil {
			t.Fatal(err)
		}
		unstructured.RemoveNestedField(cur.Object, "spec", "autoscaling")
		if err := c.Update(ctx, cur, client.FieldValidation("Strict")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if _, err := get(t, c, "keda.sh/v1alpha1", "ScaledObject", "chat"); !apierrors.IsNotFound(err) {
			t.Errorf("ScaledObject after the update: %v", err)
		}
		if _, err := get(t, c, "monitoring.coreos.com/v1", "PrometheusRule", "inferslo-chat"); err != nil {
			t.Errorf("PrometheusRule after the update: %v", err)
		}
	})

	t.Run("a deleted InferenceSLO reconciles to nothing; its objects name it as owner for the garbage collector", func(t *testing.T) {
		if err := c.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		got, err := get(t, c, "monitoring.coreos.com/v1", "PrometheusRule", "inferslo-chat")
		if err != nil {
			t.Fatal(err)
		}
		if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != obj.GetUID() || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("owner %+v", ref)
		}
	})

	t.Run("a bad spec passes the schema and the webhook refuses it with validate's message", func(t *testing.T) {
		bad := object(t, spec)
		bad.SetName("bad")
		objs, _, _ := unstructured.NestedSlice(bad.Object, "spec", "objectives")
		objs[0].(map[string]any)["threshold"] = "300ms"
		if err := unstructured.SetNestedSlice(bad.Object, objs, "spec", "objectives"); err != nil {
			t.Fatal(err)
		}
		// The schema alone accepts it (server-side dry run).
		if err := c.Create(ctx, bad.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict")); err != nil {
			t.Fatalf("schema: %v", err)
		}
		srv := httptest.NewServer(controller.Webhook{})
		defer srv.Close()
		raw, _ := json.Marshal(bad.Object)
		body, _ := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request:  &admissionv1.AdmissionRequest{UID: "1", Operation: admissionv1.Create, Namespace: namespace, Object: runtime.RawExtension{Raw: raw}},
		})
		resp, err := http.Post(srv.URL+controller.WebhookPath, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
			t.Fatal(err)
		}
		if review.Response.Allowed {
			t.Fatal("allowed")
		}
		// validate on the same spec as a file prints the same lines.
		src, err := controller.SourceOf(bad)
		if err != nil {
			t.Fatal(err)
		}
		bin := os.Getenv("INFERSLO_BIN")
		if bin == "" {
			t.Skip("INFERSLO_BIN is not set")
		}
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(src.Name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, src.Name), src.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "validate", src.Name)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		if !bytes.HasPrefix(out, []byte(review.Response.Result.Message)) || review.Response.Result.Message == "" {
			t.Errorf("webhook:\n%s\nvalidate:\n%s", review.Response.Result.Message, out)
		}
		t.Logf("refused:\n%s", review.Response.Result.Message)
		// The reconciler reports the same in the status.
		if err := c.Create(ctx, bad, client.FieldValidation("Strict")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: "bad"}}); err != nil {
			t.Fatal(err)
		}
		if cond := ready(t, c, "bad"); cond["status"] != "False" || cond["message"] != review.Response.Result.Message {
			t.Errorf("Ready: %v", cond)
		}
	})
}
