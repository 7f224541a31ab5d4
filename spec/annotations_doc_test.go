package spec

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// annotationDocs says what each inferslo.dev annotation holds; the
// reference in docs/annotations.md is written from it and the extension
// table, so a row without its sentence, or a stale reference, fails.
func annotationDocs() map[string]string {
	return map[string]string{
		AnnotationEngine:                   "The engine preset whose metrics the SLI reads (`vllm`, `sglang`, `tgi`, ...; `inferslo plan --help` and docs/engines.md list them). Shorthand: `spec.engine`.",
		AnnotationEngineVersion:            "The engine version deployed (`0.10.1`): picks the catalog's variant for it (metric names and buckets of older releases). Shorthand: `spec.engineVersion`.",
		AnnotationEngineMetrics:            "A custom engine's catalog entry as YAML (histograms with buckets, counters, gauges), for a gateway's own metrics. Shorthand: `spec.metrics`.",
		AnnotationSLI:                      "The inference SLI of the objective: `ttft`, `itl`, `tpot`, `e2e`, `queue`, `errors`, `rejections`, `incomplete`, `streams` or `goodput`. Shorthand: `spec.objectives[].sli`.",
		AnnotationThreshold:                "The latency threshold (`500ms`); it must be a bucket boundary of the engine's histogram. Shorthand: `spec.objectives[].threshold`.",
		AnnotationSelector:                 "The label matchers that scope every query to this SLO's traffic (`model_name=\"llama-3-70b\"`). Shorthand: `spec.selector`.",
		AnnotationTTFTDenominator:          "`histogram` (requests that produced a first token) or `requests` (every request, so failures count as slow). Shorthand: `spec.ttftDenominator`.",
		AnnotationScrapeInterval:           "The engines' scrape interval (`30s`); burn windows are held to four of them. Shorthand: `spec.scrapeInterval`.",
		AnnotationEvaluation:               "The rule groups' evaluation interval (`1m`). Shorthand: `spec.evaluationInterval`.",
		AnnotationRunbookURL:               "An http(s) runbook URL, put on every alert as `runbook_url`. Shorthand: `spec.alerting.runbookURL`.",
		annotationPrefix + "dashboard-url": "An http(s) dashboard URL, put on every alert as `dashboard_url`. Shorthand: `spec.alerting.dashboardURL`.",
		AnnotationNoData:                   "`\"false\"` turns off the configuration alert raised when the SLI's series vanish. Shorthand: `spec.alerting.noData`.",
		AnnotationMinEvents:                "The events per second below which burn alerts stay quiet (a gate against noise at low traffic). Shorthand: `spec.alerting.minEventsPerSecond`.",
		AnnotationAutoscaling:              "The KEDA section as JSON (target, replicas, Prometheus address, queue target, capacity facts). Shorthand: `spec.autoscaling`.",
		AnnotationBurnAlerts:               "`\"false\"` turns the default burn-rate tiers off (explicit alert policies still apply). Shorthand: `spec.alerting.page.enabled`, `spec.alerting.ticket.enabled`.",
		AnnotationGroupBy:                  "Labels to split the SLO by (`model_name,region`): one SLI, budget and alert per group. Shorthand: `spec.groupBy`.",
		AnnotationAlertLabels:              "A JSON object of labels put on every alert of the SLO (`{\"team\":\"llm\"}`). Shorthand: `spec.alerting.labels`.",
		AnnotationSeverities:               "A JSON object naming the page and ticket severities (`{\"page\":\"critical\",\"ticket\":\"warning\"}`). Shorthand: `spec.alerting.severities`.",
		AnnotationScaleOnBurn:              "`\"true\"` or `\"false\"`: whether the SLO's burn rate feeds KEDA's burn-rate trigger (latency SLOs default to true). Shorthand: `spec.objectives[].scaleOnBurn`.",
		AnnotationTier:                     "`interactive` (pages and tickets) or `batch` (tickets only, 90d window by default). Shorthand: `spec.tier`.",
		AnnotationHistogramType:            "`classic` (le buckets) or `native` (exponential native histograms, as OpenTelemetry writes). Shorthand: `spec.histogramType`.",
		AnnotationNativeSchema:             "The coarsest native-histogram schema the engine writes (`3`), which bounds how exactly a threshold is counted. Shorthand: `spec.nativeSchema`.",
		AnnotationBuckets:                  "A JSON object of buckets a deployment changed from the engine's defaults (`{\"ttft\":[0.1,0.3,1]}`). Shorthand: `spec.buckets`.",
		AnnotationOutage:                   "The outage tier (a fast page for a total outage) as JSON, or `\"false\"`. Shorthand: `spec.alerting.outage`.",
		AnnotationQueueBacklog:             "The queue-backlog warning as JSON (`perReplica`, `for`), or `\"false\"`. Shorthand: `spec.alerting.queueBacklog`.",
		AnnotationLoadShedding:             "The load-shedding recordings as JSON (`shed`, `reduceContext`: `above`, `for`), or `\"false\"`. Shorthand: `spec.alerting.loadShedding`.",
		AnnotationMaintenance:              "Planned maintenance windows as a JSON list, each recurring (`schedule` `\"MINUTE HOUR * * DAYS\"`, `duration` up to 24h, `timeZone` a fixed offset) or one-off (`start`, `end`, RFC 3339): their events are left out of the SLI, the budget and every burn alert. Shorthand: `spec.alerting.maintenance`.",
		AnnotationShortWindow:              "On an AlertCondition: the short window of a multi-window burn condition (`5m`).",
	}
}

func annotationReference() (string, error) {
	docs := annotationDocs()
	var b strings.Builder
	b.WriteString("# Annotations\n\n")
	b.WriteString("<!-- Written by `go test ./spec -run TestAnnotationReference -update` from the extension table. -->\n\n")
	b.WriteString("Plain OpenSLO v1 specs carry what OpenSLO has no field for as `inferslo.dev/*` annotations on the\n")
	b.WriteString("SLO (`metadata.annotations`); the shorthand has a field for each, and `inferslo export` writes\n")
	b.WriteString("them back. Values are strings: JSON where a row says so.\n\n")
	b.WriteString("| Annotation | What it holds |\n|---|---|\n")
	keys := []string{}
	for _, row := range extensionTable() {
		keys = append(keys, row.key)
	}
	keys = append(keys, AnnotationShortWindow)
	for _, k := range keys {
		d, ok := docs[k]
		if !ok {
			return "", fmt.Errorf("annotation %s has no sentence in annotationDocs", k)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", k, d)
	}
	if len(docs) != len(keys) {
		return "", fmt.Errorf("annotationDocs has %d sentences for %d annotations", len(docs), len(keys))
	}
	return b.String(), nil
}

func TestAnnotationReference(t *testing.T) {
	want, err := annotationReference()
	if err != nil {
		t.Fatal(err)
	}
	const path = "../docs/annotations.md"
	// -update is bad_test.go's flag: both test packages share one binary.
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is stale (run go test ./spec -run TestAnnotationReference -update and read the diff)", path)
	}
}
