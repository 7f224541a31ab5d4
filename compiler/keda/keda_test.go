package keda

import (
	"bytes"
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/inferslo/inferslo/compiler/internal/golden"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/kube/crdschema"
	"github.com/inferslo/inferslo/compiler/model"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const crdFile = "testdata/keda.sh_scaledobjects.yaml"

var vllmSignals = model.Signals{
	QueueDepth:       "vllm:num_requests_waiting",
	Running:          "vllm:num_requests_running",
	KVCacheUsage:     "vllm:kv_cache_usage_perc",
	Requests:         "vllm:request_success_total",
	PromptTokens:     "vllm:prompt_tokens_total",
	GenerationTokens: "vllm:generation_tokens_total",
	TTFT:             "vllm:time_to_first_token_seconds",
	ITL:              "vllm:inter_token_latency_seconds",
	E2E:              "vllm:e2e_request_latency_seconds",
}

func pageTier() []model.Tier {
	return []model.Tier{{Severity: "page", For: 2 * time.Minute, Windows: []model.WindowPair{
		{Long: time.Hour, Short: 5 * time.Minute, Factor: model.DecimalFromFloat(14.4)},
	}}}
}

// chatAutoscaling is what the spec package resolves for the shorthand's
// autoscaling section, defaults filled in.
func chatAutoscaling() *model.Autoscaling {
	return &model.Autoscaling{
		TargetKind:             "Deployment",
		TargetName:             "vllm-llama-3-70b",
		Namespace:              "inference",
		MinReplicas:            2,
		MaxReplicas:            80,
		ServerAddress:          "http://prometheus-operated.monitoring:9090",
		AuthenticationRef:      "prometheus-auth",
		Headroom:               model.NewDecimal(8, 10),
		BurnRateTrigger:        true,
		ScaleUpStabilization:   30 * time.Second,
		ScaleDownStabilization: 120 * time.Second,
		Capacity: model.Capacity{
			PeakRPS:         model.NewDecimal(1000, 1),
			MeanServiceTime: 40 * time.Millisecond,
		},
	}
}

// chatSLOs are the vLLM TTFT and errors SLOs of service chat, each with its
// own copy of the autoscaling section, as the spec package produces them.
func chatSLOs() []model.SLO {
	common := func(name, role string) model.SLO {
		return model.SLO{
			Name:           name,
			Service:        model.Service{Name: "chat"},
			Source:         "examples/chat.yaml",
			Objective:      model.NewDecimal(99, 100),
			Window:         28 * 24 * time.Hour,
			Budgeting:      "Occurrences",
			Alerting:       model.Alerting{Tiers: pageTier(), NoData: true},
			Evaluation:     30 * time.Second,
			ScrapeInterval: 15 * time.Second,
			Inference: &model.Inference{
				Engine:    "vllm",
				Role:      role,
				Selector:  `model_name="llama-3-70b"`,
				Signals:   vllmSignals,
				Histogram: "",
			},
			Autoscaling: chatAutoscaling(),
		}
	}
	ttft := common("chat-ttft", "ttft")
	ttft.Inference.Threshold = model.NewDecimal(25, 100)
	ttft.Inference.Histogram = "vllm:time_to_first_token_seconds"
	ttft.ScaleOnBurn = true // a latency SLO, as spec resolves it
	errs := common("chat-errors", "errors")
	errs.Objective = model.NewDecimal(999, 1000)
	return []model.SLO{errs, ttft}
}

// plainSLO is a plain OpenSLO ratio SLO of another service, without
// autoscaling: Build must skip it.
func plainSLO() model.SLO {
	return model.SLO{
		Name:      "search-availability",
		Service:   model.Service{Name: "search"},
		Source:    "examples/search.yaml",
		Objective: model.NewDecimal(995, 1000),
		Window:    28 * 24 * time.Hour,
		SLI: model.SLI{
			Counter: true,
			Total:   &model.Query{Expr: `http_requests_total{job="search"}`},
			Bad:     &model.Query{Expr: `http_requests_total{job="search",code=~"5.."}`},
		},
		Alerting: model.Alerting{Tiers: pageTier()},
	}
}

func set(slos ...model.SLO) model.Set {
	s := model.Set{SLOs: slos}
	s.Sort()
	return s
}

func compileCRD(t *testing.T, strict bool) *jsonschema.Schema {
	t.Helper()
	s, err := crdschema.CompileFile(crdFile, "v1alpha1", strict)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, name, got, *update)
}

func build(t *testing.T, s model.Set) []byte {
	t.Helper()
	files, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("Build() wrote %d files, want 1", len(files))
	}
	return files[0].Data
}

// decoded is the generated object read back generically, so tests see what
// Kubernetes would see.
type decoded struct {
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		ScaleTargetRef  map[string]string `yaml:"scaleTargetRef"`
		MinReplicaCount int               `yaml:"minReplicaCount"`
		MaxReplicaCount int               `yaml:"maxReplicaCount"`
		Fallback        struct {
			FailureThreshold int    `yaml:"failureThreshold"`
			Replicas         int    `yaml:"replicas"`
			Behavior         string `yaml:"behavior"`
		} `yaml:"fallback"`
		Advanced struct {
			HorizontalPodAutoscalerConfig struct {
				Behavior map[string]map[string]int `yaml:"behavior"`
			} `yaml:"horizontalPodAutoscalerConfig"`
		} `yaml:"advanced"`
		Triggers []struct {
			Name              string            `yaml:"name"`
			Type              string            `yaml:"type"`
			MetricType        string            `yaml:"metricType"`
			Metadata          map[string]any    `yaml:"metadata"`
			AuthenticationRef map[string]string `yaml:"authenticationRef"`
		} `yaml:"triggers"`
	} `yaml:"spec"`
}

func decode(t *testing.T, data []byte) decoded {
	t.Helper()
	var d decoded
	if err := yaml.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestScaledObjectMatchesGoldenAndValidatesAgainstTheCRD(t *testing.T) {
	minimal := func() model.Set {
		slos := chatSLOs()[1:] // the TTFT SLO alone
		a := slos[0].Autoscaling
		a.Namespace, a.AuthenticationRef, a.BurnRateTrigger = "", "", false
		a.Capacity = model.Capacity{}
		a.QueuePerReplica = model.NewDecimal(4, 1)
		return set(slos...)
	}
	tests := []struct {
		name   string
		set    model.Set
		golden string
	}{
		{"vLLM chat with capacity plan, burn-rate trigger and authentication", set(append(chatSLOs(), plainSLO())...), "chat.yaml"},
		{"a TTFT SLO with an explicit queue target and no plan", minimal(), "chat.minimal.yaml"},
	}
	schema := compileCRD(t, true)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := Build(tt.set)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 || files[0].Path != "keda/chat.yaml" {
				t.Fatalf("files = %v, want keda/chat.yaml only (search has no autoscaling)", files)
			}
			data := files[0].Data
			if !strings.HasPrefix(string(data), "# Code generated by inferslo from examples/chat.yaml. DO NOT EDIT.\n") {
				t.Errorf("missing generated-code header:\n%s", data)
			}
			if err := crdschema.Validate(schema, data); err != nil {
				t.Errorf("ScaledObject does not validate against the CRD (strict): %v\n%s", err, data)
			}
			golden(t, tt.golden, data)
		})
	}
}

func TestTriggersActBeforeTheSLOBurns(t *testing.T) {
	data := build(t, set(chatSLOs()...))
	d := decode(t, data)
	byName := map[string]int{}
	for i, tr := range d.Spec.Triggers {
		byName[tr.Name] = i
	}
	const rps = `sum(irate(vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",le="+Inf"}[2m]))`
	want := []struct {
		name, metricType, query, threshold, activation string
	}{
		// The share of requests over the 250ms bucket over two minutes,
		// over at least 1 / (120s × 0.008) requests per second, over 80%
		// of the 1% budget, against 1, read at most 1.5: one sync asks for
		// at most half as many replicas again as serve.
		{"ttft-chat-ttft", "Value",
			`clamp_max(((sum(rate(vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",le="+Inf"}[2m])) - sum(rate(vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",le="0.25"}[2m]))) / clamp_min(sum(rate(vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",le="+Inf"}[2m])), 1.1)) / 0.008, 1.5)`,
			"1", "0"},
		// The plan implies 0.7 waiting requests per replica, raised to the
		// floor of 1: the serving replicas' mean against it, read at most 1.5.
		{"queue", "Value", `clamp_max(avg(vllm:num_requests_waiting{model_name="llama-3-70b"}), 1.5)`, "1", "0"},
		// Requests per second over the last two scrapes plus the climb of
		// the next minute, in erlangs (× 40ms), plus their square-root
		// reserve: β = (42 replicas / 0.8 headroom − 40) / √40 = 1.977,
		// against the one slot of a replica.
		{"load", "AverageValue", "sum((" + rps + " + clamp_min(deriv((" + rps + ")[2m:15s]) * 60, 0)) * 0.04 + 1.977 * sqrt((" + rps + " + clamp_min(deriv((" + rps + ")[2m:15s]) * 60, 0)) * 0.04))", "1", "0"},
		// Gated at 1 / (300s × 0.01) events per second, at most doubling.
		{"burn-chat-ttft", "Value", `clamp_max(sum(inferslo:sli_bad_events:rate{slo="chat-ttft",window="5m"}) / clamp_min(sum(inferslo:sli_events:rate{slo="chat-ttft",window="5m"}), 0.34) / 0.01, 2)`, "1", "1"},
	}
	if len(d.Spec.Triggers) != len(want) {
		t.Fatalf("got %d triggers, want %d", len(d.Spec.Triggers), len(want))
	}
	for _, w := range want {
		i, ok := byName[w.name]
		if !ok {
			t.Errorf("no trigger %s", w.name)
			continue
		}
		tr := d.Spec.Triggers[i]
		got := map[string]any{
			"metricType": tr.MetricType, "query": tr.Metadata["query"], "threshold": tr.Metadata["threshold"],
			"activationThreshold": tr.Metadata["activationThreshold"], "serverAddress": tr.Metadata["serverAddress"],
			"ignoreNullValues": tr.Metadata["ignoreNullValues"], "authenticationRef": tr.AuthenticationRef["name"],
		}
		exp := map[string]any{
			"metricType": w.metricType, "query": w.query, "threshold": w.threshold,
			"activationThreshold": w.activation, "serverAddress": "http://prometheus-operated.monitoring:9090",
			"ignoreNullValues": "false", "authenticationRef": "prometheus-auth",
		}
		for k := range exp {
			if got[k] != exp[k] {
				t.Errorf("%s %s = %#v, want %#v", w.name, k, got[k], exp[k])
			}
		}
	}
	if got := d.Spec.Fallback; got.Replicas != 42 || got.FailureThreshold != 3 || got.Behavior != "currentReplicas" {
		t.Errorf("fallback = %+v, want the plan's 42 replicas after 3 failures for a KEDA without behavior, and the current count held", got)
	}
	b := d.Spec.Advanced.HorizontalPodAutoscalerConfig.Behavior
	if b["scaleUp"]["stabilizationWindowSeconds"] != 30 || b["scaleDown"]["stabilizationWindowSeconds"] != 120 {
		t.Errorf("behavior = %v, want 30s up and 120s down", b)
	}
	if ref := d.Spec.ScaleTargetRef; ref["apiVersion"] != "apps/v1" || ref["kind"] != "Deployment" || ref["name"] != "vllm-llama-3-70b" {
		t.Errorf("scaleTargetRef = %v", ref)
	}
	if d.Metadata.Name != "chat" || d.Metadata.Namespace != "inference" || d.Spec.MinReplicaCount != 2 || d.Spec.MaxReplicaCount != 80 {
		t.Errorf("metadata %+v, replicas %d..%d", d.Metadata, d.Spec.MinReplicaCount, d.Spec.MaxReplicaCount)
	}
}

func TestEveryMetadataValueIsAString(t *testing.T) {
	data := build(t, set(chatSLOs()...))
	// Decoding into `any` keeps YAML's own typing: an unquoted 0.2 would come
	// back as a float.
	for _, tr := range decode(t, data).Spec.Triggers {
		for k, v := range tr.Metadata {
			if _, ok := v.(string); !ok {
				t.Errorf("trigger %s metadata.%s is %T (%v), want a string", tr.Name, k, v, v)
			}
		}
	}
}

// engineAndRuleSeries lists, independently of the backend, every metric name
// a trigger may read: the fixture's engine series and the rules backend's
// recordings.
func engineAndRuleSeries() map[string]bool {
	ok := map[string]bool{}
	for _, n := range []string{
		"inferslo:sli_events:rate", "inferslo:sli_bad_events:rate", "inferslo:sli_error:ratio",
		"inferslo:error_budget_remaining:ratio", "inferslo:objective:ratio", "inferslo:slo_info",
		"vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc",
		"vllm:time_to_first_token_seconds_bucket",
	} {
		ok[n] = true
	}
	return ok
}

func TestEveryQueryParsesReadsKnownSeriesAndReturnsOneElement(t *testing.T) {
	data := build(t, set(chatSLOs()...))
	p := parser.NewParser(parser.Options{})
	known := engineAndRuleSeries()
	for _, tr := range decode(t, data).Spec.Triggers {
		q, _ := tr.Metadata["query"].(string)
		expr, err := p.ParseExpr(q)
		if err != nil {
			t.Errorf("trigger %s: query %q does not parse: %v", tr.Name, q, err)
			continue
		}
		for _, vs := range parser.ExtractSelectors(expr) {
			for _, m := range vs {
				if m.Name == "__name__" && !known[m.Value] {
					t.Errorf("trigger %s reads %s, which neither the engine nor the rules provide", tr.Name, m.Value)
				}
			}
		}
		if !single(expr) {
			t.Errorf("trigger %s: %s may return several elements", tr.Name, q)
		}
	}
}

func TestQueryChecksCatchBadQueries(t *testing.T) {
	allowed := engineAndRuleSeries()
	tests := []struct {
		name   string
		query  string
		single bool
		reads  bool // reads only allowed series
	}{
		{"a summed gauge is one element", `sum(vllm:num_requests_waiting)`, true, true},
		{"a max over a recording is one element", `max(inferslo:sli_error:ratio{slo="a",window="5m"})`, true, true},
		{"a quantile over le-grouped buckets is one element", `histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m])))`, true, true},
		{"a bare gauge returns one series per pod", `vllm:num_requests_waiting`, false, true},
		{"a sum by pod returns several", `sum by (pod) (vllm:num_requests_waiting)`, false, true},
		{"a sum without returns several", `sum without (pod) (vllm:num_requests_waiting)`, false, true},
		{"a quantile grouped by model returns several", `histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m])))`, false, true},
		{"GPU utilisation is not a series inferslo provides", `max(DCGM_FI_DEV_GPU_UTIL)`, true, false},
		{"a selector by __name__ regex names no metric", `sum({__name__=~"vllm:.*"})`, true, false},
	}
	p := parser.NewParser(parser.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expr, err := p.ParseExpr(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if got := single(expr); got != tt.single {
				t.Errorf("single(%s) = %v, want %v", tt.query, got, tt.single)
			}
			if err := readsOnly(expr, allowed); (err == nil) != tt.reads {
				t.Errorf("readsOnly(%s) = %v, want allowed=%v", tt.query, err, tt.reads)
			}
		})
	}
	t.Run("checkQueries refuses a query that does not parse", func(t *testing.T) {
		o := goodObject()
		o.Spec.Triggers[0].Metadata["query"] = "sum(rate(x[5m])"
		if err := checkQueries(o, allowed); err == nil || !strings.Contains(err.Error(), "does not parse") {
			t.Errorf("checkQueries() = %v", err)
		}
	})
}

func TestCRDValidatorRejectsBrokenObjects(t *testing.T) {
	data := build(t, set(chatSLOs()...))
	base := string(data)
	tests := []struct {
		name   string
		edit   func(string) string
		strict bool
	}{
		{"a numeric threshold is not a string", func(s string) string {
			return strings.Replace(s, `threshold: "1"`, `threshold: 1`, 1)
		}, false},
		{"a boolean ignoreNullValues is not a string", func(s string) string {
			return strings.Replace(s, `ignoreNullValues: "false"`, `ignoreNullValues: false`, 1)
		}, false},
		{"a misspelt field is refused in strict mode", func(s string) string {
			return strings.Replace(s, "  minReplicaCount:", "  pollingIntervall: 15\n  minReplicaCount:", 1)
		}, true},
		{"a negative minimum is below the CRD's minimum", func(s string) string {
			return strings.Replace(s, "minReplicaCount: 2", "minReplicaCount: -1", 1)
		}, false},
		{"an empty trigger list is below minItems", func(s string) string {
			i := strings.Index(s, "  triggers:\n")
			return s[:i] + "  triggers: []\n"
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			broken := tt.edit(base)
			if broken == base {
				t.Fatal("the edit did not change the object")
			}
			err := crdschema.Validate(compileCRD(t, tt.strict), []byte(broken))
			if err == nil {
				t.Errorf("validator accepted:\n%s", broken)
			}
			t.Logf("rejected as expected: %v", err)
		})
	}
	t.Run("a misspelt field passes when not strict", func(t *testing.T) {
		loose := strings.Replace(base, "  minReplicaCount:", "  pollingIntervall: 15\n  minReplicaCount:", 1)
		if err := crdschema.Validate(compileCRD(t, false), []byte(loose)); err != nil {
			t.Errorf("non-strict validator rejected an unknown field: %v", err)
		}
	})
}

// goodObject is a valid ScaledObject for the webhook-rule table.
func goodObject() scaledObject {
	return scaledObject{
		APIVersion: "keda.sh/v1alpha1",
		Kind:       "ScaledObject",
		Metadata:   objectMeta{Name: "chat"},
		Spec: spec{
			ScaleTargetRef:  scaleTarget{Name: "vllm"},
			MinReplicaCount: 1,
			MaxReplicaCount: 10,
			Fallback:        &fallback{FailureThreshold: 3, Replicas: 5},
			Advanced: &advanced{HorizontalPodAutoscalerConfig: &hpaConfig{Behavior: &behavior{
				ScaleUp: &scalingRules{StabilizationWindowSeconds: 30}, ScaleDown: &scalingRules{StabilizationWindowSeconds: 120},
			}}},
			Triggers: []trigger{{
				Name: "queue", Type: "prometheus", MetricType: "AverageValue",
				Metadata: map[string]string{"serverAddress": "http://p:9090", "query": "sum(vllm:num_requests_waiting)", "threshold": "4"},
			}},
		},
	}
}

func TestWebhookRulesTheCRDCannotExpress(t *testing.T) {
	long := strings.Repeat("a", 55)
	tests := []struct {
		name  string
		edit  func(*scaledObject)
		wants string // empty: valid
	}{
		{"the reference object is valid", func(*scaledObject) {}, ""},
		{"a 54-character name fits the HPA prefix", func(o *scaledObject) { o.Metadata.Name = long[:54] }, ""},
		{"a 55-character name overflows keda-hpa-<name>", func(o *scaledObject) { o.Metadata.Name = long }, "HPA name"},
		{"a 55-character name is fine with an HPA name set", func(o *scaledObject) {
			o.Metadata.Name = long
			o.Spec.Advanced.HorizontalPodAutoscalerConfig.Name = "chat-hpa"
		}, ""},
		{"a 64-character name is too long even with an HPA name", func(o *scaledObject) {
			o.Metadata.Name = strings.Repeat("a", 64)
			o.Spec.Advanced.HorizontalPodAutoscalerConfig.Name = "chat-hpa"
		}, "longer than 63"},
		{"an uppercase name is not a DNS subdomain", func(o *scaledObject) { o.Metadata.Name = "Chat" }, "DNS subdomain"},
		{"two triggers may not share a name", func(o *scaledObject) {
			o.Spec.Triggers = append(o.Spec.Triggers, o.Spec.Triggers[0])
		}, "used twice"},
		{"min above max is refused", func(o *scaledObject) { o.Spec.MinReplicaCount = 11 }, "above maxReplicaCount"},
		{"a fallback with only cpu and memory triggers is refused", func(o *scaledObject) {
			o.Spec.Triggers = []trigger{{Name: "cpu", Type: "cpu", Metadata: map[string]string{"value": "60"}}, {Name: "mem", Type: "memory", Metadata: map[string]string{"value": "60"}}}
		}, "not cpu or memory"},
		{"a cpu trigger beside a prometheus one keeps the fallback valid", func(o *scaledObject) {
			o.Spec.Triggers = append(o.Spec.Triggers, trigger{Name: "cpu", Type: "cpu", Metadata: map[string]string{"value": "60"}})
		}, ""},
		{"a negative fallback is refused", func(o *scaledObject) { o.Spec.Fallback.Replicas = -1 }, "negative"},
		{"a stabilization window above an hour is refused", func(o *scaledObject) {
			o.Spec.Advanced.HorizontalPodAutoscalerConfig.Behavior.ScaleDown.StabilizationWindowSeconds = 3601
		}, "0..3600"},
		{"a threshold that is not a number is refused", func(o *scaledObject) { o.Spec.Triggers[0].Metadata["threshold"] = "four" }, "threshold"},
		{"a zero threshold is refused", func(o *scaledObject) { o.Spec.Triggers[0].Metadata["threshold"] = "0" }, "threshold"},
		{"a missing server address is refused", func(o *scaledObject) { delete(o.Spec.Triggers[0].Metadata, "serverAddress") }, "serverAddress"},
		{"the Utilization metric type is refused", func(o *scaledObject) { o.Spec.Triggers[0].MetricType = "Utilization" }, "metricType"},
		{"no trigger at all is refused", func(o *scaledObject) { o.Spec.Triggers = nil }, "at least one trigger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := goodObject()
			tt.edit(&o)
			err := check(o)
			switch {
			case tt.wants == "" && err != nil:
				t.Errorf("check() = %v, want valid", err)
			case tt.wants != "" && (err == nil || !strings.Contains(err.Error(), tt.wants)):
				t.Errorf("check() = %v, want an error mentioning %q", err, tt.wants)
			}
		})
	}
}

func TestAMaxReplicasBelowThePlanCapsTheFallback(t *testing.T) {
	slos := chatSLOs()
	for _, s := range slos {
		s.Autoscaling.MaxReplicas = 32
	}
	data := build(t, set(slos...))
	if got := decode(t, data).Spec.Fallback.Replicas; got != 32 {
		t.Errorf("fallback replicas = %d, want the plan's 42 clamped to max 32", got)
	}
}

func TestBuildWithoutQueueTargetFallsBackToMax(t *testing.T) {
	slos := chatSLOs()
	for _, s := range slos {
		s.Autoscaling.Capacity = model.Capacity{}
	}
	d := decode(t, build(t, set(slos...)))
	for _, tr := range d.Spec.Triggers {
		if strings.HasPrefix(tr.Name, "queue") {
			t.Errorf("queue trigger %s written without a target", tr.Name)
		}
	}
	if d.Spec.Fallback.Replicas != 80 {
		t.Errorf("fallback replicas = %d, want max 80 when there is no plan", d.Spec.Fallback.Replicas)
	}
}

func TestBuildHonoursOverrides(t *testing.T) {
	slos := chatSLOs()
	for _, s := range slos {
		s.Autoscaling.ScaleUpStabilization = 0
		s.Autoscaling.ScaleDownStabilization = 10 * time.Minute
		s.Autoscaling.FallbackReplicas = 12
		s.Autoscaling.QueuePerReplica = model.NewDecimal(25, 10)
		s.Autoscaling.Headroom = model.NewDecimal(9, 10)
		s.Autoscaling.TargetKind = "LeaderWorkerSet"
	}
	data := build(t, set(slos...))
	d := decode(t, data)
	b := d.Spec.Advanced.HorizontalPodAutoscalerConfig.Behavior
	if b["scaleUp"]["stabilizationWindowSeconds"] != 0 || b["scaleDown"]["stabilizationWindowSeconds"] != 600 {
		t.Errorf("behavior = %v, want 0s up and 600s down", b)
	}
	if d.Spec.Fallback.Replicas != 12 {
		t.Errorf("fallback = %v, want 12", d.Spec.Fallback)
	}
	if ref := d.Spec.ScaleTargetRef; ref["apiVersion"] != "leaderworkerset.x-k8s.io/v1" || ref["kind"] != "LeaderWorkerSet" {
		t.Errorf("scaleTargetRef = %v", ref)
	}
	thresholds, queries := map[string]any{}, map[string]string{}
	for _, tr := range d.Spec.Triggers {
		thresholds[tr.Name] = tr.Metadata["threshold"]
		queries[tr.Name], _ = tr.Metadata["query"].(string)
	}
	if !strings.HasSuffix(queries["ttft-chat-ttft"], ", 0.93)) / 0.009, 1.5)") || thresholds["queue"] != "2.5" || !strings.HasSuffix(queries["queue"], ", 3.75)") {
		t.Errorf("thresholds = %v, ttft query %s, queue query %s; want ttft over 0.01×0.9 = 0.009 gated at 0.93 requests/s, and queue 2.5 read at most 3.75", thresholds, queries["ttft-chat-ttft"], queries["queue"])
	}
}

// A target of a kind inferslo does not know, named with its API version
// (a KServe InferenceService, any custom resource with a scale
// subresource), is scaled by that reference, and the object still passes
// KEDA's CRD.
func TestATargetNamedWithItsAPIVersionIsScaledByThatReference(t *testing.T) {
	slos := chatSLOs()
	for _, s := range slos {
		s.Autoscaling.TargetAPIVersion = "serving.kserve.io/v1beta1"
		s.Autoscaling.TargetKind = "InferenceService"
	}
	data := build(t, set(slos...))
	if ref := decode(t, data).Spec.ScaleTargetRef; ref["apiVersion"] != "serving.kserve.io/v1beta1" || ref["kind"] != "InferenceService" {
		t.Errorf("scaleTargetRef = %v", ref)
	}
	if err := crdschema.Validate(compileCRD(t, true), data); err != nil {
		t.Errorf("the ScaledObject does not validate against the CRD (strict): %v\n%s", err, data)
	}
}

func TestBuildRefusesUnusableSettings(t *testing.T) {
	tests := []struct {
		name  string
		edit  func([]model.SLO)
		wants string
	}{
		{"SLOs scaling one target disagree on its settings", func(s []model.SLO) { s[1].Autoscaling.MaxReplicas = 40 }, "different autoscaling settings"},
		{"a grouped SLO declares no groups", func(s []model.SLO) {
			for i := range s {
				s[i].GroupBy = []string{"model_name"}
			}
		}, "declare the groups"},
		{"no scale target name", func(s []model.SLO) {
			for _, x := range s {
				x.Autoscaling.TargetName = ""
			}
		}, "target name"},
		{"no Prometheus address", func(s []model.SLO) {
			for _, x := range s {
				x.Autoscaling.ServerAddress = ""
			}
		}, "server address"},
		{"an unknown scale target kind", func(s []model.SLO) {
			for _, x := range s {
				x.Autoscaling.TargetKind = "InferenceService"
			}
		}, "not one of"},
		{"a zero headroom", func(s []model.SLO) {
			for _, x := range s {
				x.Autoscaling.Headroom = model.Decimal{}
			}
		}, "headroom"},
		{"a stabilization window in milliseconds", func(s []model.SLO) {
			for _, x := range s {
				x.Autoscaling.ScaleUpStabilization = 1500 * time.Millisecond
			}
		}, "whole number of seconds"},
		{"min above max", func(s []model.SLO) {
			for _, x := range s {
				x.Autoscaling.MinReplicas = 90
			}
		}, "above maxReplicaCount"},
		{"a service name too long for the HPA name", func(s []model.SLO) {
			for i := range s {
				s[i].Service.Name = strings.Repeat("c", 55)
			}
		}, "HPA name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slos := chatSLOs()
			tt.edit(slos)
			_, err := Build(set(slos...))
			if err == nil || !strings.Contains(err.Error(), tt.wants) {
				t.Errorf("Build() error = %v, want one mentioning %q", err, tt.wants)
			}
		})
	}
	t.Run("a plain SLO with autoscaling but no burn trigger has nothing to scale on", func(t *testing.T) {
		p := plainSLO()
		p.Autoscaling = chatAutoscaling()
		p.Autoscaling.BurnRateTrigger = false
		p.Autoscaling.Capacity = model.Capacity{}
		if _, err := Build(set(p)); err == nil || !strings.Contains(err.Error(), "no trigger") {
			t.Errorf("Build() error = %v", err)
		}
	})
}

func TestBuildSkipsServicesWithoutAutoscalingAndIsDeterministic(t *testing.T) {
	files, err := Build(set(plainSLO()))
	if err != nil || len(files) != 0 {
		t.Errorf("Build(no autoscaling) = %v, %v; want nothing", files, err)
	}
	first := build(t, set(chatSLOs()...))
	slos := chatSLOs()
	sort.Slice(slos, func(i, j int) bool { return slos[i].Name > slos[j].Name })
	second := build(t, set(slos...))
	if !bytes.Equal(first, second) {
		t.Error("output depends on input order")
	}
}

func BenchmarkBuild(b *testing.B) {
	s := set(chatSLOs()...)
	for b.Loop() {
		if _, err := Build(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExampleObjectsMatchTheCRD validates what the bundled examples compile
// to (the golden files the compiler test keeps current), in strict mode.
func TestExampleObjectsMatchTheCRD(t *testing.T) {
	files, err := crdschema.ValidateFiles(compileCRD(t, true), "../../testdata/golden/examples/keda/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 6 {
		t.Fatalf("want at least 6 example objects, found %d", len(files))
	}
	// The webhook rules the CRD cannot express hold too.
	for p, data := range files {
		var o scaledObject
		if err := yaml.Unmarshal(data, &o); err != nil {
			t.Fatal(err)
		}
		if err := check(o); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestTheTTFTTriggerOfANativeHistogramReadsItsOneSeries(t *testing.T) {
	slos := chatSLOs()
	for i := range slos {
		slos[i].Inference.Native = true
	}
	data := build(t, set(slos...))
	const h = `sum(rate(vllm:time_to_first_token_seconds{model_name="llama-3-70b"}[2m]))`
	want := `clamp_max(((histogram_count(` + h + `) * histogram_fraction(0.25, +Inf, ` + h + `) / clamp_min(histogram_count(` + h + `), 1.1) >= 0) or on () (0 * histogram_count(` + h + `))) / 0.008, 1.5)`
	for _, tr := range decode(t, data).Spec.Triggers {
		if tr.Name == "ttft-chat-ttft" {
			if q := tr.Metadata["query"]; q != want {
				t.Errorf("query = %v, want %s", q, want)
			}
			return
		}
	}
	t.Errorf("no TTFT trigger in:\n%s", data)
}

// groupedChat is the chat SLOs grouped by model, autoscaling two declared
// models, each on its own Deployment.
func groupedChat() []model.SLO {
	slos := chatSLOs()
	for i := range slos {
		slos[i].GroupBy = []string{"model_name"}
		slos[i].Inference.Selector = ""
		a := slos[i].Autoscaling
		a.TargetName = "vllm-{{model_name}}"
		a.Groups = []model.ScaleGroup{
			{{Name: "model_name", Value: "llama-3-70b"}},
			{{Name: "model_name", Value: "qwen-2-7b"}},
		}
	}
	return slos
}

func TestAGroupedSLOGetsOneScaledObjectPerGroupReadingOnlyItsGroup(t *testing.T) {
	files, err := Build(set(groupedChat()...))
	if err != nil {
		t.Fatal(err)
	}
	schema := compileCRD(t, true)
	want := map[string]string{"keda/vllm-llama-3-70b.yaml": "llama-3-70b", "keda/vllm-qwen-2-7b.yaml": "qwen-2-7b"}
	if len(files) != len(want) {
		t.Fatalf("files = %v, want one per group", files)
	}
	p := parser.NewParser(parser.Options{})
	for _, f := range files {
		model, ok := want[f.Path]
		if !ok {
			t.Errorf("unexpected file %s", f.Path)
			continue
		}
		if err := crdschema.Validate(schema, f.Data); err != nil {
			t.Errorf("%s: %v", f.Path, err)
		}
		d := decode(t, f.Data)
		if d.Metadata.Name != "vllm-"+model || d.Spec.ScaleTargetRef["name"] != "vllm-"+model {
			t.Errorf("%s: name %s scales %s, want both vllm-%s", f.Path, d.Metadata.Name, d.Spec.ScaleTargetRef["name"], model)
		}
		if len(d.Spec.Triggers) != 4 {
			t.Errorf("%s: %d triggers, want ttft, queue, load and burn", f.Path, len(d.Spec.Triggers))
		}
		// Every selector of every trigger selects this group, and only it.
		for _, tr := range d.Spec.Triggers {
			expr, err := p.ParseExpr(tr.Metadata["query"].(string))
			if err != nil {
				t.Fatal(err)
			}
			for _, vs := range parser.ExtractSelectors(expr) {
				found := false
				for _, m := range vs {
					if m.Name == "model_name" {
						found = m.Type == labels.MatchEqual && m.Value == model
					}
				}
				if !found {
					t.Errorf("%s trigger %s: selector %v does not select model_name=%q", f.Path, tr.Name, vs, model)
				}
			}
		}
	}
	golden(t, "grouped.vllm-qwen-2-7b.yaml", files[1].Data)
}

func TestSpecsOfOneServiceScaleTheirOwnTargets(t *testing.T) {
	slos := chatSLOs()
	// The errors SLO's spec scales an SGLang Deployment of the same service.
	slos[0].Autoscaling.TargetName = "sglang-chat"
	slos[0].Inference.Engine = "sglang"
	slos[0].Inference.Signals = model.Signals{QueueDepth: "sglang:num_queue_reqs"}
	slos[0].Autoscaling.QueuePerReplica = model.NewDecimal(4, 1)
	slos[0].Autoscaling.Capacity = model.Capacity{}
	files, err := Build(set(slos...))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range files {
		d := decode(t, f.Data)
		var names []string
		for _, tr := range d.Spec.Triggers {
			names = append(names, tr.Name)
		}
		got[f.Path] = d.Spec.ScaleTargetRef["name"] + ": " + strings.Join(names, " ")
	}
	want := map[string]string{
		"keda/sglang-chat.yaml":      "sglang-chat: queue",
		"keda/vllm-llama-3-70b.yaml": "vllm-llama-3-70b: ttft-chat-ttft queue load burn-chat-ttft",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("objects = %v, want %v", got, want)
	}
}

func TestAVanishedSeriesIsAnErrorEvenWhereTheFleetScalesToZero(t *testing.T) {
	for _, tt := range []struct {
		name        string
		minReplicas int
		want        string
	}{
		{"a fleet that keeps a replica reads a vanished series as a KEDA error", 2, "false"},
		{"a fleet that may scale to zero does so on a reading of 0, never on vanished series", 0, "false"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			slos := chatSLOs()
			for _, s := range slos {
				s.Autoscaling.MinReplicas = tt.minReplicas
			}
			data := build(t, set(slos...))
			d := decode(t, data)
			for _, tr := range d.Spec.Triggers {
				if got := tr.Metadata["ignoreNullValues"]; got != tt.want {
					t.Errorf("trigger %s ignoreNullValues = %v, want %s", tr.Name, got, tt.want)
				}
			}
			if f := d.Spec.Fallback; f.Replicas < tt.minReplicas || f.Behavior != "currentReplicas" {
				t.Errorf("fallback = %+v, want at least %d replicas and the current count held", f, tt.minReplicas)
			}
		})
	}
}
