package spec_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/spec"
)

// durationSpec writes one spec from the fields the fuzzer varies: the
// shorthand's window and alerting tiers, or plain OpenSLO's timeWindow,
// lookbackWindow, alertAfter and timeSliceWindow. Every value is a quoted
// YAML string, so the fuzzer varies values, not the document's structure.
func durationSpec(plain bool, window, first, second string, page, ticket uint8) []byte {
	q := strconv.Quote
	var b strings.Builder
	if !plain {
		b.WriteString("apiVersion: inferslo/v1alpha1\nkind: InferenceSLO\nmetadata: {name: chat}\nspec:\n  engine: vllm\n  selector: {model_name: m}\n")
		if window != "" {
			fmt.Fprintf(&b, "  window: %s\n", q(window))
		}
		b.WriteString("  objectives: [{sli: errors, target: 99.9%}, {sli: ttft, threshold: 250ms, target: 99%}]\n")
		tier := func(name, after string, on uint8) string {
			var f []string
			switch on % 3 {
			case 1:
				f = append(f, "enabled: true")
			case 2:
				f = append(f, "enabled: false")
			}
			if after != "" {
				f = append(f, "for: "+q(after))
			}
			if len(f) == 0 {
				return ""
			}
			return name + ": {" + strings.Join(f, ", ") + "}"
		}
		var tiers []string
		for _, t := range []string{tier("page", first, page), tier("ticket", second, ticket)} {
			if t != "" {
				tiers = append(tiers, t)
			}
		}
		if len(tiers) > 0 {
			fmt.Fprintf(&b, "  alerting: {%s}\n", strings.Join(tiers, ", "))
		}
		return []byte(b.String())
	}
	budgeting := "Occurrences"
	slice := ""
	if page%2 == 1 {
		budgeting = "Timeslices"
		slice = "      timeSliceTarget: 0.9\n      timeSliceWindow: " + q(second) + "\n"
	}
	after := ""
	if ticket%2 == 1 {
		after = "      alertAfter: " + q(second) + "\n"
	}
	fmt.Fprintf(&b, `apiVersion: openslo/v1
kind: SLO
metadata: {name: gateway}
spec:
  service: llm
  budgetingMethod: %s
  indicator:
    metadata: {name: gateway-sli}
    spec:
      ratioMetric:
        counter: true
        bad: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total{status="5xx"})'}}}
        total: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total)'}}}
  timeWindow: [{duration: %s, isRolling: true}]
  objectives:
    - target: 0.999
%s  alertPolicies:
    - kind: AlertPolicy
      metadata: {name: gateway-page}
      spec:
        alertWhenBreaching: true
        conditions:
          - kind: AlertCondition
            metadata: {name: burn}
            spec:
              severity: page
              condition:
                kind: burnrate
                op: gt
                threshold: 14.4
                lookbackWindow: %s
%s`, budgeting, q(window), slice, q(first), after)
	return []byte(b.String())
}

// durationSeeds are the duration values written in the examples and the
// bad specs, and the ones that once panicked in the OpenSLO SDK.
func durationSeeds(t testing.TB) []string {
	seeds := []string{"", "0m", "0s", "1.5d", "1.5", "-5m", "5", "1x", "9999999999Y", "1M", "1Q", "1Y", "2w"}
	re := regexp.MustCompile(`(?m)\b(?:window|for|duration|lookbackWindow|alertAfter|timeSliceWindow):\s*"?([^\s",}]+)`)
	for _, glob := range []string{"../examples/*.yaml", "../examples/*/*.yaml", "../testdata/bad/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range re.FindAllSubmatch(b, -1) {
				if !slices.Contains(seeds, string(m[1])) {
					seeds = append(seeds, string(m[1]))
				}
			}
		}
	}
	return seeds
}

// checkLocated parses and compiles one spec: no panic, every problem
// located by file, line and property path, and a spec without errors
// compiles.
func checkLocated(t *testing.T, data []byte) {
	t.Helper()
	res, err := spec.Parse(spec.Source{Name: "fuzz.yaml", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Problems {
		if p.File != "fuzz.yaml" || p.Line <= 0 || p.Path == "" || p.Message == "" {
			t.Fatalf("unlocated problem %+v in\n%s", p, data)
		}
	}
	if res.Err() != nil {
		return
	}
	if _, err := compiler.Compile(res.Set, compiler.Options{}); err != nil {
		t.Fatalf("a spec without problems failed to compile: %v\n%s", err, data)
	}
}

// FuzzDurations varies the durations of the shorthand and of plain
// OpenSLO: windows, alert delays, lookback and slice windows. Each one
// reaches the OpenSLO SDK's duration type, whose Duration panics on a unit
// it does not know; every value must end as a located problem or compile.
func FuzzDurations(f *testing.F) {
	seeds := durationSeeds(f)
	for i, s := range seeds {
		next := seeds[(i+1)%len(seeds)]
		for _, plain := range []bool{false, true} {
			f.Add(plain, s, next, s, uint8(i%3), uint8((i/3)%3))
			f.Add(plain, "28d", s, next, uint8(i%3), uint8(i%2))
		}
	}
	f.Fuzz(func(t *testing.T, plain bool, window, first, second string, page, ticket uint8) {
		checkLocated(t, durationSpec(plain, window, first, second, page, ticket))
	})
}

// TestDurationsOnceFatal holds the specs that panicked with "invalid unit"
// in the OpenSLO SDK: each is now a located problem, or compiles.
func TestDurationsOnceFatal(t *testing.T) {
	for _, c := range []struct {
		name                  string
		plain                 bool
		window, first, second string
		page, ticket          uint8
	}{
		{name: "a page delay of 0m", window: "28d", first: "0m"},
		{name: "a page delay of 0s", window: "28d", first: "0s"},
		{name: "a ticket delay of 0m", window: "28d", second: "0m"},
		{name: "a window of 1.5d", window: "1.5d"},
		{name: "a window of 1.5 without a unit", window: "1.5"},
		{name: "no window and the ticket tier off", ticket: 2},
		{name: "no window and the page tier off", page: 2},
		{name: "no window and a page delay", first: "5m"},
		{name: "plain OpenSLO with a window of 1.5d", plain: true, window: "1.5d", first: "1h"},
		{name: "plain OpenSLO with a lookback of 1.5h", plain: true, window: "28d", first: "1.5h"},
		{name: "plain OpenSLO with an alert delay of 2.5m", plain: true, window: "28d", first: "1h", second: "2.5m", ticket: 1},
		{name: "plain OpenSLO with a slice window of 1.5m", plain: true, window: "28d", first: "1h", second: "1.5m", page: 1},
		{name: "plain OpenSLO with an empty lookback", plain: true, window: "28d"},
		{name: "plain OpenSLO with a window past time.Duration's range", plain: true, window: "9999999999Y", first: "1h"},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkLocated(t, durationSpec(c.plain, c.window, c.first, c.second, c.page, c.ticket))
		})
	}
}
