package spec

// OpenSLO v1 has no fields for inference facts, the KEDA section or the
// short window of a burn-rate condition, and its decoding rejects unknown
// fields; like vendor tools, inferslo reads them from annotations. Each
// SLO key is a row of extensionTable, which writes and reads Extensions.
const (
	annotationPrefix = "inferslo.dev/"
	// On an SLO:
	AnnotationEngine          = annotationPrefix + "engine"           // vllm
	AnnotationEngineVersion   = annotationPrefix + "engine-version"   // 0.10.1: picks the catalog's version variant
	AnnotationEngineMetrics   = annotationPrefix + "engine-metrics"   // a custom engine's catalog entry, as YAML
	AnnotationSLI             = annotationPrefix + "sli"              // ttft, itl, tpot, e2e, queue, errors
	AnnotationThreshold       = annotationPrefix + "threshold"        // 250ms
	AnnotationSelector        = annotationPrefix + "selector"         // model_name="llama-3-70b"
	AnnotationTTFTDenominator = annotationPrefix + "ttft-denominator" // histogram | requests
	AnnotationScrapeInterval  = annotationPrefix + "scrape-interval"  // 30s
	AnnotationEvaluation      = annotationPrefix + "evaluation-interval"
	AnnotationRunbookURL      = annotationPrefix + "runbook-url"
	AnnotationNoData          = annotationPrefix + "no-data"               // "true" | "false"
	AnnotationMinEvents       = annotationPrefix + "min-events-per-second" // 0.5
	AnnotationAutoscaling     = annotationPrefix + "autoscaling"           // JSON of the shorthand's autoscaling section
	AnnotationBurnAlerts      = annotationPrefix + "burn-alerts"           // "false" turns the default tiers off
	AnnotationGroupBy         = annotationPrefix + "group-by"              // model_name,region: one SLO per group
	AnnotationAlertLabels     = annotationPrefix + "alert-labels"          // JSON object: labels on every alert
	AnnotationSeverities      = annotationPrefix + "severities"            // JSON object: {"page":"critical","ticket":"warning"}
	AnnotationScaleOnBurn     = annotationPrefix + "scale-on-burn"         // "true" | "false"; latency SLOs default to true
	AnnotationTier            = annotationPrefix + "tier"                  // interactive | batch
	AnnotationHistogramType   = annotationPrefix + "histogram-type"        // classic | native
	AnnotationNativeSchema    = annotationPrefix + "native-schema"         // 3: the coarsest schema of native histograms
	AnnotationBuckets         = annotationPrefix + "buckets"               // JSON object: {"ttft":[0.1,0.3,1]}, buckets a deployment changed
	// On an AlertCondition:
	AnnotationShortWindow = annotationPrefix + "short-window" // 5m
)
