package controller

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"
)

// access is one (group, resource, verb) a client call needs.
type access struct{ group, resource, verb string }

func (a access) String() string { return a.verb + " " + a.resource + "." + a.group }

func accessOf(obj any, verb, sub string) access {
	var gvk schema.GroupVersionKind
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		gvk = o.GroupVersionKind()
	case *unstructured.UnstructuredList:
		gvk = o.GroupVersionKind()
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	r := plural.Resource
	if sub != "" {
		r += "/" + sub
	}
	return access{gvk.Group, r, verb}
}

// recording wraps a client, noting the access each call needs.
func recording(c client.WithWatch, seen map[access]bool) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			seen[accessOf(obj, "get", "")] = true
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			seen[accessOf(list, "list", "")] = true
			return c.List(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			seen[accessOf(obj, "create", "")] = true
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			seen[accessOf(obj, "update", "")] = true
			return c.Update(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			seen[accessOf(obj, "delete", "")] = true
			return c.Delete(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			seen[accessOf(obj, "patch", "")] = true
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			seen[accessOf(obj, "update", sub)] = true
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
}

func allows(rules []rbacv1.PolicyRule, a access) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, a.group) && slices.Contains(r.Resources, a.resource) && slices.Contains(r.Verbs, a.verb) {
			return true
		}
	}
	return false
}

// manifestDocs decodes every document of the manifest strictly into its
// API type.
func manifestDocs(t *testing.T, data []byte) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		doc = bytes.TrimPrefix(doc, []byte("---\n"))
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil || head.Kind == "" {
			t.Fatalf("document %q: %v", doc, err)
		}
		var v any
		switch head.Kind {
		case "ServiceAccount":
			v = &corev1.ServiceAccount{}
		case "Service":
			v = &corev1.Service{}
		case "ClusterRole":
			v = &rbacv1.ClusterRole{}
		case "RoleBinding":
			v = &rbacv1.RoleBinding{}
		case "Deployment":
			v = &appsv1.Deployment{}
		case "ValidatingWebhookConfiguration":
			v = &admissionregistrationv1.ValidatingWebhookConfiguration{}
		default:
			v = &map[string]any{}
		}
		if err := yaml.UnmarshalStrict(doc, v); err != nil {
			t.Fatalf("%s: %v", head.Kind, err)
		}
		out[head.Kind] = append(out[head.Kind], v)
	}
	return out
}

// TestTheManifestsRBACIsExactlyWhatTheReconcilersUse runs both reconcilers
// through applying, updating, failing and pruning (dashboards on), notes
// the access each client call needs, and holds the manifest's ClusterRole
// to it: every call allowed, every grant used (list and watch by the
// informers of what the reconcilers watch, events and leases by the
// manager).
func TestTheManifestsRBACIsExactlyWhatTheReconcilersUse(t *testing.T) {
	data, err := Manifest(ManifestOptions{Namespace: "llm", Image: "example.com/inferslo-controller:test", CertManager: true})
	if err != nil {
		t.Fatal(err)
	}
	docs := manifestDocs(t, data)
	for kind, n := range map[string]int{"CustomResourceDefinition": len(Kinds), "ServiceAccount": 1, "ClusterRole": 1, "RoleBinding": 1, "Deployment": 1, "Service": 1, "ValidatingWebhookConfiguration": 1, "Issuer": 1, "Certificate": 1} {
		if len(docs[kind]) != n {
			t.Errorf("%d %s documents, want %d", len(docs[kind]), kind, n)
		}
	}
	rules := docs["ClusterRole"][0].(*rbacv1.ClusterRole).Rules

	seen := map[access]bool{}
	ctx := context.Background()
	shorthand := exampleObject(t, "../../../examples/chat.yaml", "llm")
	gateway, err := os.ReadFile("../../../examples/openslo/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs := clusterObjects(t, gateway, "llm")
	base := newOpenSLOClient(objs...)
	if err := base.Create(ctx, shorthand.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	c := recording(base, seen)
	opts := Options{DashboardLabels: DefaultDashboardLabel}
	islo := &Reconciler{Client: c, Options: opts}
	oslo := &OpenSLOReconciler{Client: c, Options: opts}
	isloReq := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "llm", Name: "chat"}}
	osloReq := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "llm", Name: OpenSLORequestName}}
	step := func(what string, r interface {
		Reconcile(context.Context, ctrl.Request) (ctrl.Result, error)
	}, req ctrl.Request) {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	step("first apply", islo, isloReq)
	step("first apply", oslo, osloReq)
	// Updates: more replicas and other labels rewrite the ScaledObject, the
	// rule and the dashboard; then the autoscaling section goes, so the
	// ScaledObject is pruned.
	edit := func(f func(*unstructured.Unstructured)) {
		cur := newObject(GVK)
		if err := base.Get(ctx, isloReq.NamespacedName, cur); err != nil {
			t.Fatal(err)
		}
		f(cur)
		if err := base.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
	}
	edit(func(o *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(o.Object, int64(32), "spec", "autoscaling", "maxReplicas"); err != nil {
			t.Fatal(err)
		}
	})
	islo.Options.Labels = map[string]string{"release": "kps"}
	islo.Options.DashboardLabels = map[string]string{"dashboards": "slo"}
	step("update", islo, isloReq)
	edit(func(o *unstructured.Unstructured) { unstructured.RemoveNestedField(o.Object, "spec", "autoscaling") })
	step("update", islo, isloReq)
	if err := base.Delete(ctx, objs[3].DeepCopy()); err != nil {
		t.Fatal(err)
	}
	step("prune", oslo, osloReq)

	for a := range seen {
		if !allows(rules, a) {
			t.Errorf("the reconcilers %s; the ClusterRole does not allow it", a)
		}
	}
	// The informers list and watch what the reconcilers watch.
	watched := map[schema.GroupVersionKind]bool{}
	for _, k := range Kinds {
		watched[k.GVK()] = true
	}
	for _, gvk := range Owned {
		watched[gvk] = true
	}
	informed := func(group, resource string) bool {
		for gvk := range watched {
			if plural, _ := meta.UnsafeGuessKindToResource(gvk); gvk.Group == group && plural.Resource == resource {
				return true
			}
		}
		return false
	}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					a := access{g, res, v}
					switch {
					case seen[a]:
					case (v == "list" || v == "watch") && informed(g, res):
					case g == "" && res == "events", g == "coordination.k8s.io" && res == "leases":
					default:
						t.Errorf("the ClusterRole grants %s, which no reconcile uses", a)
					}
				}
			}
		}
	}
	t.Logf("%d accesses, all allowed", len(seen))
}

func TestTheManifestInstallsTheCommittedCRDsAndRunsLeaderElected(t *testing.T) {
	data, err := Manifest(ManifestOptions{Namespace: "llm", Image: "example.com/c:1", Replicas: 2, Args: []string{"--no-dashboards"}})
	if err != nil {
		t.Fatal(err)
	}
	docs := manifestDocs(t, data)
	committed, err := CommittedCRDs()
	if err != nil {
		t.Fatal(err)
	}
	for i, crd := range committed {
		if !bytes.Contains(data, crd) || docs["CustomResourceDefinition"][i] == nil {
			t.Errorf("%s is not in the manifest", Kinds[i].Path())
		}
	}
	if len(docs["Issuer"]) != 0 {
		t.Error("cert-manager objects without CertManager")
	}
	d := docs["Deployment"][0].(*appsv1.Deployment)
	args := d.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--namespace=llm", "--leader-elect", "--no-dashboards", fmt.Sprintf("--webhook-port=%d", webhookPort)} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.ServiceAccountName != Name {
		t.Errorf("replicas %d, service account %q", *d.Spec.Replicas, d.Spec.Template.Spec.ServiceAccountName)
	}
	w := docs["ValidatingWebhookConfiguration"][0].(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[0]
	if *w.ClientConfig.Service.Path != WebhookPath || w.Rules[0].Resources[0] != Resource || w.Rules[0].APIGroups[0] != Group {
		t.Errorf("webhook %+v", w)
	}
	if _, err := Manifest(ManifestOptions{Namespace: "llm"}); err == nil {
		t.Error("a manifest with no image")
	}
}
