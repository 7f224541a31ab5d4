package lint_test

import (
	"fmt"
	"log"

	"github.com/inferslo/inferslo/compiler/lint"
)

// A pre-commit hook of its own: lint a hand-written rule file and print
// each finding at its line, as `inferslo lint` does.
func ExampleRun() {
	rules := []byte(`groups:
  - name: latency
    rules:
      - record: job:ttft_seconds:p99
        expr: histogram_quantile(0.99, sum(rate(vllm:time_to_first_token_seconds_bucket[5m])))
`)
	res, err := lint.Run([]lint.Source{{Name: "latency.rules.yaml", Data: rules}}, lint.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range res.Findings {
		fmt.Printf("%s:%d:%d: %s: %s\n", f.File, f.Line, f.Column, f.Severity, f.Check)
	}
	// Output:
	// latency.rules.yaml:5:40: error: histogram/quantile-without-le
}
