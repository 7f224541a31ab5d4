package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inferslo/inferslo/compiler/kube/controller"
)

// An InferenceSLO created in namespace llm whose TTFT threshold is not a
// bucket of vLLM's histogram.
const badObject = `{"apiVersion":"inferslo.dev/v1alpha1","kind":"InferenceSLO",
"metadata":{"name":"chat","namespace":"llm","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},
"spec":{"engine":"vllm","window":"28d","objectives":[{"sli":"ttft","threshold":"300ms","target":"99%"},{"sli":"errors","target":"99.9%"}]}}`

func TestTheWebhookRefusesASpecWithTheMessageValidatePrints(t *testing.T) {
	resp := controller.Webhook{}.Review(&admissionv1.AdmissionRequest{
		UID: "1", Operation: admissionv1.Create, Namespace: "llm", Object: runtime.RawExtension{Raw: []byte(badObject)},
	})
	if resp.Allowed || resp.Result == nil {
		t.Fatalf("allowed: %+v", resp)
	}
	// The same spec as a file, at the name the webhook gives it.
	src, err := controller.SourceOf(mustObject(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll(filepath.Dir(src.Name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src.Name, src.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"validate", src.Name}, &stdout, &stderr); code != exitProblems {
		t.Fatalf("validate exit %d: %s", code, stderr.String())
	}
	cli, _, _ := strings.Cut(stderr.String(), "1 problem(s) found\n")
	if resp.Result.Message != cli || !strings.Contains(cli, "inferenceslo/llm/chat:") {
		t.Errorf("the webhook says:\n%s\nvalidate prints:\n%s", resp.Result.Message, stderr.String())
	}
}

func mustObject(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	o := &unstructured.Unstructured{}
	if err := o.UnmarshalJSON([]byte(badObject)); err != nil {
		t.Fatal(err)
	}
	return o
}
