package controller

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/grafana"
	"github.com/inferslo/inferslo/spec"
)

// compiledDashboard is compile's dashboard of a service for the spec
// file, its header naming source instead of the file.
func compiledDashboard(t *testing.T, file, service, source string) string {
	t.Helper()
	res, err := spec.Load(file)
	if err != nil || res.Err() != nil {
		t.Fatalf("%s: %v %v", file, err, res.Err())
	}
	out, err := compiler.Compile(res.Set, compiler.Options{Outputs: []string{"grafana"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out.Files {
		if f.Path == grafana.ServicePath(service) {
			return strings.ReplaceAll(string(f.Data), file, source)
		}
	}
	t.Fatalf("compile wrote no %s", grafana.ServicePath(service))
	return ""
}

func TestADashboardIsAConfigMapForGrafanasSidecarWithCompilesJSON(t *testing.T) {
	ctx := context.Background()
	obj := exampleObject(t, "../../../examples/chat.yaml", "llm")
	c := newClient(obj.DeepCopy())
	r := &Reconciler{Client: c, Options: Options{DashboardLabels: DefaultDashboardLabel}}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "llm", Name: "chat"}}); err != nil {
		t.Fatal(err)
	}
	cm := newObject(ConfigMapGVK)
	if err := c.Get(ctx, types.NamespacedName{Namespace: "llm", Name: "inferslo-dashboard-chat"}, cm); err != nil {
		t.Fatal(err)
	}
	data, _ := cm.Object["data"].(map[string]any)
	want := compiledDashboard(t, "../../../examples/chat.yaml", "chat", sourceName(Kind, "llm", "chat"))
	if got, _ := data["chat.json"].(string); got != want || len(data) != 1 {
		t.Errorf("the ConfigMap's chat.json (%d bytes, %d keys) is not compile's grafana/chat.json (%d bytes)", len(got), len(data), len(want))
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" || len(cm.GetLabels()) != 1 {
		t.Errorf("labels %v", cm.GetLabels())
	}
	if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != obj.GetUID() {
		t.Errorf("controller owner %+v", ref)
	}
	if n := count(t, c, 2); n != 1 {
		t.Errorf("%d ConfigMaps: the overview, which spans specs, is not applied", n)
	}
}

func TestWithoutDashboardLabelsNoConfigMapIsWritten(t *testing.T) {
	obj := exampleObject(t, "../../../examples/chat.yaml", "llm")
	c := newClient(obj.DeepCopy())
	r := &Reconciler{Client: c}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "llm", Name: "chat"}}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, c, 2); n != 0 {
		t.Errorf("%d ConfigMaps", n)
	}
}
