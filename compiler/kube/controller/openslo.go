package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/inferslo/inferslo/spec"
)

// SLOGVK is the OpenSLO SLO kind in a cluster: the objects a namespace's
// OpenSLO specs yield name its SLOs as owners.
var SLOGVK = schema.GroupVersionKind{Group: spec.OpenSLOGroup, Version: spec.OpenSLOVersion, Kind: "SLO"}

// OpenSLOKinds are the OpenSLO v1 kinds the controller reads, in the order
// their objects are handed to spec.
func OpenSLOKinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, k := range Kinds {
		if k.Group == spec.OpenSLOGroup {
			out = append(out, k.GVK())
		}
	}
	return out
}

// OpenSLORequestName is the name of the one reconcile request a namespace's
// OpenSLO objects make: they compile together, as the files of a folder do.
const OpenSLORequestName = "openslo"

// ListOpenSLO reads a namespace's OpenSLO objects, each kind's by name.
func ListOpenSLO(ctx context.Context, c client.Reader, namespace string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, gvk := range OpenSLOKinds() {
		list, err := listOf(ctx, c, gvk, namespace)
		if err != nil {
			return nil, fmt.Errorf("list %s in %s: %w", gvk.Kind, namespace, err)
		}
		items := make([]*unstructured.Unstructured, 0, len(list.Items))
		for i := range list.Items {
			if list.Items[i].GetDeletionTimestamp() == nil {
				items = append(items, &list.Items[i])
			}
		}
		slices.SortFunc(items, func(a, b *unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
		out = append(out, items...)
	}
	return out, nil
}

// slosOf are the SLOs among a namespace's OpenSLO objects.
func slosOf(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GroupVersionKind() == SLOGVK {
			out = append(out, o)
		}
	}
	return out
}

// BuildOpenSLO runs validate and compile on a namespace's OpenSLO objects,
// each one spec file (kind/namespace/name), as `inferslo compile` runs on a
// folder of their files: an SLO finds the SLI, AlertPolicy or Service it
// names among the namespace's objects.
func BuildOpenSLO(objs []*unstructured.Unstructured, namespace string, opts Options) (Desired, error) {
	return build(objs, namespace, opts)
}

// OpenSLOReconciler turns a namespace's OpenSLO objects into the objects
// compile writes for their files. Every object it writes names the
// namespace's SLOs as owners (the first by name as controller), so the
// garbage collector removes it with the last SLO; each SLO's Ready
// condition says whether the namespace compiled.
type OpenSLOReconciler struct {
	Client  client.Client
	Options Options
	Events  record.EventRecorder
}

// SetupWithManager watches the OpenSLO kinds and the objects their SLOs
// own; every event reconciles the object's namespace.
func (r *OpenSLOReconciler) SetupWithManager(mgr ctrl.Manager) error {
	toNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: OpenSLORequestName}}}
	})
	ownedBySLO := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if ref := metav1.GetControllerOf(o); ref == nil || !isSLO(*ref) {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: OpenSLORequestName}}}
	})
	b := ctrl.NewControllerManagedBy(mgr).Named("openslo")
	for _, gvk := range OpenSLOKinds() {
		b = b.Watches(newObject(gvk), toNamespace)
	}
	for _, gvk := range Owned {
		b = b.Watches(newObject(gvk), ownedBySLO)
	}
	return b.Complete(r)
}

func isSLO(ref metav1.OwnerReference) bool {
	return ref.APIVersion == SLOGVK.GroupVersion().String() && ref.Kind == SLOGVK.Kind
}

// Reconcile compiles the request's namespace: it applies what the OpenSLO
// objects yield, deletes what they no longer yield and records the outcome
// on each SLO. A namespace with errors changes nothing applied, as compile
// writes nothing for a folder with errors.
func (r *OpenSLOReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := req.Namespace
	objs, err := ListOpenSLO(ctx, r.Client, ns)
	if err != nil {
		return ctrl.Result{}, err
	}
	slos := slosOf(objs)
	var d Desired
	if len(slos) > 0 {
		d, err = BuildOpenSLO(objs, ns, r.Options)
	}
	s := settler{Client: r.Client, Events: r.Events, owners: slos, mine: isSLO, own: func(o *unstructured.Unstructured) { ownAll(o, slos) }}
	return s.settle(ctx, ns, d, err, fmt.Sprintf("%d objects applied for the namespace's %d SLOs", len(d.Objects), len(slos)))
}

// ownAll names the SLOs as the object's owners, the first as controller.
func ownAll(o *unstructured.Unstructured, slos []*unstructured.Unstructured) {
	t, f := true, false
	refs := make([]metav1.OwnerReference, 0, len(slos))
	for i, s := range slos {
		ctl := &f
		if i == 0 {
			ctl = &t
		}
		refs = append(refs, metav1.OwnerReference{
			APIVersion: SLOGVK.GroupVersion().String(), Kind: SLOGVK.Kind, Name: s.GetName(), UID: s.GetUID(),
			Controller: ctl, BlockOwnerDeletion: &t,
		})
	}
	o.SetOwnerReferences(refs)
}
