package controller

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/inferslo/inferslo/compiler/kube/controller"
	"github.com/inferslo/inferslo/spec"
)

// exported is `inferslo export --kubernetes --namespace ns` of a spec
// file, as objects.
func exported(t *testing.T, path, ns string) []*unstructured.Unstructured {
	t.Helper()
	bin := os.Getenv("INFERSLO_BIN")
	if bin == "" {
		t.Skip("INFERSLO_BIN is not set (.ci/run sets it)")
	}
	out, err := exec.Command(bin, "export", "--kubernetes", "--namespace", ns, path).Output()
	if err != nil {
		t.Fatalf("inferslo export: %v", err)
	}
	objs, err := controller.Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// handWritten is an OpenSLO file's documents as objects written for the
// cluster: the openslo.com/v1 group, Kubernetes metadata.
func handWritten(t *testing.T, path, ns string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := controller.Objects(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, d := range docs {
		m, err := spec.ClusterObject(d.Object, ns)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

var autoscalingNamespace = regexp.MustCompile(`"namespace":"([a-z0-9-]+)"`)

// TestOpenSLOObjectsAreAppliedAsCompileWritesTheirFiles creates the OpenSLO
// examples as objects written for the cluster, and every example (and every
// spec in $INFERSLO_CONTROLLER_SPECS) as `inferslo export --kubernetes`
// prints it, each in a namespace of its own, reconciles the namespace and
// checks the objects applied against compile's for the file; then deletes
// them and checks the objects applied are pruned.
func TestOpenSLOObjectsAreAppliedAsCompileWritesTheirFiles(t *testing.T) {
	type source struct {
		name, path string
		objects    func(t *testing.T, path, ns string) []*unstructured.Unstructured
	}
	var sources []source
	plain, _ := filepath.Glob("../../../examples/openslo/*.yaml")
	for _, p := range plain {
		sources = append(sources, source{"written-" + strings.TrimSuffix(filepath.Base(p), ".yaml"), p, handWritten})
	}
	all, _ := filepath.Glob("../../../examples/*.yaml")
	all = append(all, plain...)
	if dir := os.Getenv("INFERSLO_CONTROLLER_SPECS"); dir != "" {
		more, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		all = append(all, more...)
	}
	for _, p := range all {
		sources = append(sources, source{"export-" + strings.TrimSuffix(filepath.Base(p), ".yaml"), p, exported})
	}
	if len(plain) < 2 || len(sources) < 10 {
		t.Fatalf("%d OpenSLO files, %d sources", len(plain), len(sources))
	}
	c := newClient(t)
	r := &controller.OpenSLOReconciler{Client: c}
	ctx := context.Background()
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			ns := src.name
			objs := src.objects(t, src.path, ns)
			// An autoscaling section naming its namespace is applied there.
			for _, o := range objs {
				if m := autoscalingNamespace.FindStringSubmatch(o.GetAnnotations()["inferslo.dev/autoscaling"]); m != nil {
					ns = m[1]
				}
			}
			if ns != src.name {
				objs = src.objects(t, src.path, ns)
			}
			want := compiled(t, src.path, ns)
			var slos []*unstructured.Unstructured
			for _, o := range objs {
				if err := c.Create(ctx, o, client.FieldValidation("Strict")); err != nil {
					t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
				}
				if o.GroupVersionKind() == controller.SLOGVK {
					slos = append(slos, o)
				}
			}
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: controller.OpenSLORequestName}}
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			for _, slo := range slos {
				got, err := getIn(t, c, ns, slo.GetAPIVersion(), slo.GetKind(), slo.GetName())
				if err != nil {
					t.Fatal(err)
				}
				conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
				if len(conds) != 1 || conds[0].(map[string]any)["status"] != "True" {
					t.Fatalf("SLO %s: conditions %v", slo.GetName(), conds)
				}
			}
			for key, got := range heldAsCompiled(t, c, ns, want) {
				if ref := metav1.GetControllerOf(got); ref == nil || ref.Kind != "SLO" || len(got.GetOwnerReferences()) != len(slos) {
					t.Errorf("%s: owners %+v", key, got.GetOwnerReferences())
				}
			}
			t.Logf("%s: %d objects and %d SLOs created; %d objects applied equal compile's", ns, len(objs), len(slos), len(want))
			// Every object goes, the SLOs with the rest (a namespace may
			// serve the next spec).
			for _, o := range objs {
				if err := c.Delete(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			for key, w := range want {
				if _, err := getIn(t, c, ns, w.GetAPIVersion(), w.GetKind(), w.GetName()); !apierrors.IsNotFound(err) {
					t.Errorf("%s after its SLOs were deleted: %v", key, err)
				}
			}
		})
	}
}

// TestTheManifestOnARealAPIServer installs the manifest's CRDs (as every
// test here does) and creates each other object strictly; the apiextensions
// test server serves only its own group and the custom resources (no core,
// apps, RBAC or admission registration), so those answer 404 and are
// listed as not applied.
func TestTheManifestOnARealAPIServer(t *testing.T) {
	cfg := startAPIServer(t)
	mapper := meta.NewDefaultRESTMapper(nil)
	objs := manifest(t)
	for _, o := range objs {
		scope := meta.RESTScopeNamespace
		if o.GetNamespace() == "" {
			scope = meta.RESTScopeRoot
		}
		mapper.Add(o.GroupVersionKind(), scope)
	}
	c, err := client.New(cfg, client.Options{Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	var applied, skipped []string
	for _, o := range objs {
		name := o.GetKind() + "/" + o.GetName()
		if o.GetKind() == "CustomResourceDefinition" {
			applied = append(applied, name+" (installed)")
			continue
		}
		// A group the server does not serve answers 404.
		switch err := c.Create(context.Background(), o, client.FieldValidation("Strict")); {
		case apierrors.IsNotFound(err):
			skipped = append(skipped, o.GetAPIVersion()+" "+name)
		case err != nil:
			t.Errorf("%s: %v", name, err)
		default:
			applied = append(applied, name)
		}
	}
	if len(applied) < len(controller.Kinds) {
		t.Errorf("applied %v", applied)
	}
	t.Logf("applied %v\nnot served here: %v", applied, skipped)
}
