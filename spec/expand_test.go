package spec_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/spec"
)

// TestThresholdsSelectTheBucketAsPrometheus3StoresIt: Prometheus 3 stores a
// classic histogram's le as a float ("1.0" where vLLM wrote "1.0" and Go
// clients write "1"), so whole seconds must select le="1.0".
func TestThresholdsSelectTheBucketAsPrometheus3StoresIt(t *testing.T) {
	tests := []struct{ threshold, le string }{
		{"250ms", `le="0.25"`},
		{"1s", `le="1.0"`},
		{"1000ms", `le="1.0"`},
		{"2.5s", `le="2.5"`},
		{"10s", `le="10.0"`},
		{"1ms", `le="0.001"`},
	}
	for _, tt := range tests {
		t.Run(tt.threshold, func(t *testing.T) {
			doc := fmt.Sprintf(`apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  window: 28d
  objectives:
    - {sli: ttft, threshold: %s, target: 99%%}
    - {sli: errors, target: 99.9%%}
`, tt.threshold)
			res, err := spec.Parse(spec.Source{Name: "chat.yaml", Data: []byte(doc)})
			if err != nil {
				t.Fatal(err)
			}
			if err := res.Err(); err != nil {
				t.Fatal(err)
			}
			var good string
			for _, s := range res.Set.SLOs {
				if s.Name == "chat-ttft" {
					good = s.SLI.Good.Expr
				}
			}
			if !strings.Contains(good, tt.le) {
				t.Errorf("good query %q does not select %s", good, tt.le)
			}
		})
	}
}
