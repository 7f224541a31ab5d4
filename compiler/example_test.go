package compiler_test

import (
	"fmt"
	"log"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/spec"
)

// A platform team compiles specs held in memory (from its own store, say)
// without the CLI: spec resolves and validates them, compiler builds every
// artifact and validates it; writing is left to the caller.
func ExampleCompile() {
	res, err := spec.Parse(spec.Source{Name: "chat.yaml", Data: []byte(`
apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  window: 28d
  selector: {model_name: llama-3-70b-instruct}
  objectives:
    - {sli: ttft, threshold: 250ms, target: 99%}
    - {sli: errors, target: 99.9%}
`)})
	if err != nil {
		log.Fatal(err)
	}
	if err := res.Err(); err != nil {
		log.Fatal(err) // located problems: file, line, property path
	}
	out, err := compiler.Compile(res.Set, compiler.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range out.Files {
		fmt.Println(f.Path)
	}
	// Output:
	// alertmanager/inhibit.yaml
	// catalog/slos.json
	// grafana/chat.json
	// grafana/overview.json
	// kubernetes/chat.prometheusrule.yaml
	// prometheus/chat.rules.yaml
	// ruler/chat.yaml
}
