package spec

import (
	"fmt"
	"strings"
	"testing"
)

func TestAProblemOnAOneLineJSONSpecShowsAWindowOfTheLine(t *testing.T) {
	var objs []string
	for i := range 3000 {
		objs = append(objs, fmt.Sprintf(`{"sli": "errors", "target": "bad%d"}`, i))
	}
	doc := `{"apiVersion": "inferslo/v1alpha1", "kind": "InferenceSLO", "metadata": {"name": "x"}, "spec": {"engine": "vllm", "window": "28d", "selector": {"model_name": "m"}, "objectives": [` +
		strings.Join(objs, ", ") + `]}}`
	res, err := Parse(Source{Name: "big.json", Data: []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) < 3000 {
		t.Fatalf("%d problems, want one per objective", len(res.Problems))
	}
	for _, p := range res.Problems {
		s := p.Snippet()
		if len(s) > 2*maxSnippet || !strings.Contains(s, "^") {
			t.Fatalf("a snippet of %d bytes for a %d-byte line: %.300s", len(s), len(doc), s)
		}
	}
	last := res.Problems[len(res.Problems)-1].Snippet()
	if !strings.Contains(last, `"bad2999"`) {
		t.Errorf("the window does not show the problem's own value: %s", last)
	}
}
