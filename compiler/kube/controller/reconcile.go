package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// FieldManager names the controller in managed fields.
const FieldManager = "inferslo"

// ConditionReady is the condition a reconcile sets: True once every object
// is applied, False with validate's messages when the spec has errors.
const ConditionReady = "Ready"

// Reasons of the Ready condition.
const (
	ReasonApplied     = "Applied"
	ReasonInvalidSpec = "InvalidSpec"
	ReasonApplyFailed = "ApplyFailed"
)

// Reconciler turns a namespace's InferenceSLO objects into the objects
// compile writes.
type Reconciler struct {
	Client  client.Client
	Options Options
	// Events, when set, records an event on the InferenceSLO for each
	// outcome that changes (Applied, InvalidSpec, ApplyFailed).
	Events record.EventRecorder
}

// SetupWithManager watches InferenceSLOs and the objects they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).For(newObject(GVK)).Named("inferenceslo")
	for _, gvk := range Owned {
		b = b.Owns(newObject(gvk))
	}
	return b.Complete(r)
}

func newObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// listOf lists a kind's objects in a namespace.
func listOf(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, namespace string) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return list, c.List(ctx, list, client.InNamespace(namespace))
}

// Reconcile applies what one InferenceSLO yields, deletes what it no
// longer yields, and records the outcome in its status. A deleted
// InferenceSLO needs nothing: its objects carry it as controller owner, so
// the garbage collector removes them.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := newObject(GVK)
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	d, err := Build(obj, r.Options)
	s := settler{Client: r.Client, Events: r.Events, owners: []*unstructured.Unstructured{obj},
		mine: func(ref metav1.OwnerReference) bool { return ref.UID == obj.GetUID() },
		own:  func(o *unstructured.Unstructured) { own(o, obj) }}
	return s.settle(ctx, obj.GetNamespace(), d, err, fmt.Sprintf("%d objects applied", len(d.Objects)))
}

// settler brings a namespace to what its owners (an InferenceSLO, or a
// namespace's OpenSLO SLOs) yield and records the outcome on each owner.
type settler struct {
	Client client.Client
	Events record.EventRecorder
	owners []*unstructured.Unstructured
	// mine accepts the controller references of the owners' objects; own
	// names the owners on an object.
	mine func(metav1.OwnerReference) bool
	own  func(*unstructured.Unstructured)
}

// settle applies what d holds, deletes what it no longer holds, and sets
// each owner's Ready condition (applied says what was done). A build with
// errors changes nothing applied.
func (s settler) settle(ctx context.Context, namespace string, d Desired, err error, applied string) (ctrl.Result, error) {
	if errors.Is(err, ErrInvalid) {
		return ctrl.Result{}, s.record(ctx, ReasonInvalidSpec, d.Problems.Errors()[0].String(), d.Problems.Errors().Report(), nil)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	var names []string
	for _, o := range d.Objects {
		s.own(o)
		names = append(names, o.GetKind()+"/"+o.GetName())
		if err := apply(ctx, s.Client, o, s.mine); err != nil {
			msg := fmt.Sprintf("%s %s: %v", o.GetKind(), o.GetName(), err)
			if serr := s.record(ctx, ReasonApplyFailed, msg, msg, names); serr != nil {
				return ctrl.Result{}, serr
			}
			return ctrl.Result{}, fmt.Errorf("apply %s", msg)
		}
	}
	if err := prune(ctx, s.Client, namespace, d, s.mine); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, s.record(ctx, ReasonApplied, applied, applied, names)
}

// record sets each owner's Ready condition (with message), after an
// event saying event: a warning always, Applied only when the owner was
// not already ready at its generation.
func (s settler) record(ctx context.Context, reason, event, message string, names []string) error {
	status, kind := metav1.ConditionFalse, corev1.EventTypeWarning
	if reason == ReasonApplied {
		status, kind = metav1.ConditionTrue, corev1.EventTypeNormal
	}
	for _, o := range s.owners {
		if c := readyOf(o); s.Events != nil && (status == metav1.ConditionFalse || c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != o.GetGeneration()) {
			s.Events.Event(o, kind, reason, event)
		}
		if err := setStatus(ctx, s.Client, o, status, reason, message, names); err != nil {
			return err
		}
	}
	return nil
}

// readyOf is the object's Ready condition, if any.
func readyOf(obj *unstructured.Unstructured) *metav1.Condition {
	return meta.FindStatusCondition(conditionsOf(obj), ConditionReady)
}

// conditionsOf reads the object's status conditions.
func conditionsOf(obj *unstructured.Unstructured) []metav1.Condition {
	var conds []metav1.Condition
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range raw {
		var cond metav1.Condition
		if b, err := json.Marshal(c); err == nil && json.Unmarshal(b, &cond) == nil {
			conds = append(conds, cond)
		}
	}
	return conds
}

// own makes the InferenceSLO the object's controller owner.
func own(o, owner *unstructured.Unstructured) {
	t := true
	o.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: APIVersion, Kind: Kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: &t, BlockOwnerDeletion: &t,
	}})
}

// apply creates the object or replaces its content, with unknown fields
// refused (fieldValidation=Strict) so a CRD that drifted from what compile
// writes fails loudly instead of pruning. An object controlled by another
// owner than mine accepts is left alone, with an error.
func apply(ctx context.Context, c client.Client, o *unstructured.Unstructured, mine func(metav1.OwnerReference) bool) error {
	cur := newObject(o.GroupVersionKind())
	err := c.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, cur)
	if apierrors.IsNotFound(err) {
		return c.Create(ctx, o, client.FieldOwner(FieldManager), client.FieldValidation("Strict"))
	}
	if err != nil {
		return err
	}
	if ref := metav1.GetControllerOf(cur); ref != nil && !mine(*ref) {
		return fmt.Errorf("already controlled by %s %s", ref.Kind, ref.Name)
	}
	if same(cur, o) {
		return nil
	}
	o.SetResourceVersion(cur.GetResourceVersion())
	return c.Update(ctx, o, client.FieldOwner(FieldManager), client.FieldValidation("Strict"))
}

// prune deletes the objects of the namespace whose controller mine accepts
// and that d no longer holds (an autoscaling section removed, a service
// renamed).
func prune(ctx context.Context, c client.Client, namespace string, d Desired, mine func(metav1.OwnerReference) bool) error {
	keep := map[string]bool{}
	for _, o := range d.Objects {
		keep[o.GetKind()+"/"+o.GetName()] = true
	}
	for _, gvk := range Owned {
		list, err := listOf(ctx, c, gvk, namespace)
		if err != nil {
			// A kind the cluster does not serve holds nothing to prune.
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		for i := range list.Items {
			o := &list.Items[i]
			ref := metav1.GetControllerOf(o)
			if ref == nil || !mine(*ref) || keep[gvk.Kind+"/"+o.GetName()] {
				continue
			}
			if err := c.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}

// setStatus records the Ready condition and the objects applied.
func setStatus(ctx context.Context, c client.Client, obj *unstructured.Unstructured, status metav1.ConditionStatus, reason, message string, objects []string) error {
	conds := conditionsOf(obj)
	meta.SetStatusCondition(&conds, metav1.Condition{Type: ConditionReady, Status: status, Reason: reason, Message: message, ObservedGeneration: obj.GetGeneration()})
	st := map[string]any{"observedGeneration": obj.GetGeneration()}
	var list []any
	for _, c := range conds {
		b, err := yaml.Marshal(c)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			return err
		}
		list = append(list, m)
	}
	st["conditions"] = list
	if len(objects) > 0 {
		st["objects"] = toAny(slices.Sorted(slices.Values(objects)))
	}
	obj.Object["status"] = st
	return c.Status().Update(ctx, obj)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// same tells whether the object in the cluster already holds what would be
// written: the same spec (or a ConfigMap's data), labels and owners.
// Writing it again would only wake the watches.
func same(cur, want *unstructured.Unstructured) bool {
	parts := func(o *unstructured.Unstructured) []any {
		return []any{o.Object["spec"], o.Object["data"], o.GetLabels(), o.GetOwnerReferences()}
	}
	a, err1 := json.Marshal(parts(cur))
	b, err2 := json.Marshal(parts(want))
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
