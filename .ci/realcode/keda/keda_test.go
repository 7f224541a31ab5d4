package keda

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	"github.com/kedacore/keda/v2/pkg/scalers"
	"github.com/kedacore/keda/v2/pkg/scalers/scalersconfig"
	v2 "k8s.io/api/autoscaling/v2"
	"sigs.k8s.io/yaml"
)

// output is the compiled examples: their ScaledObjects, rule files and
// capacity plans.
type output struct {
	objects []kedav1alpha1.ScaledObject
	rules   []string
	plans   map[string]plan // by service
}

type plan struct {
	Service         string
	Replicas        int
	QueuePerReplica float64
}

func compile(t *testing.T) output {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	inferslo(t, "compile", "examples", "-o", dir)
	var o output
	var err error
	rules, err := filepath.Glob(filepath.Join(dir, "prometheus", "*.rules.yaml"))
	if err != nil || len(rules) == 0 {
		t.Fatalf("no rule files: %v", err)
	}
	// The groups are evaluated every second rather than every minute, so
	// that the recordings the triggers read exist seconds after the start.
	interval := regexp.MustCompile(`(?m)^(\s+interval: )\S+$`)
	for _, f := range rules {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fast := filepath.Join(filepath.Dir(dir), filepath.Base(f))
		if err := os.WriteFile(fast, interval.ReplaceAll(data, []byte("${1}1s")), 0o644); err != nil {
			t.Fatal(err)
		}
		o.rules = append(o.rules, fast)
	}
	files, err := filepath.Glob(filepath.Join(dir, "keda", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ScaledObjects: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := scaledObjects(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		o.objects = append(o.objects, objs...)
	}
	var plans struct{ Plans []plan }
	if err := json.Unmarshal(inferslo(t, "plan", "--format", "json", "examples"), &plans); err != nil {
		t.Fatal(err)
	}
	o.plans = map[string]plan{}
	for _, p := range plans.Plans {
		o.plans[p.Service] = p
	}
	return o
}

// scaledObjects decodes the YAML documents of a file into KEDA's own
// type, strictly: a field KEDA does not know fails.
func scaledObjects(data []byte) ([]kedav1alpha1.ScaledObject, error) {
	var out []kedav1alpha1.ScaledObject
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var so kedav1alpha1.ScaledObject
		if err := yaml.UnmarshalStrict(doc, &so); err != nil {
			return nil, err
		}
		out = append(out, so)
	}
	return out, nil
}

// scaler is KEDA's Prometheus scaler for trigger i of so, reading server;
// set overrides metadata.
func scaler(so kedav1alpha1.ScaledObject, i int, server string, set map[string]string) (scalers.Scaler, error) {
	tr := so.Spec.Triggers[i]
	md := maps.Clone(tr.Metadata)
	md["serverAddress"] = server
	maps.Copy(md, set)
	return scalers.NewPrometheusScaler(&scalersconfig.ScalerConfig{
		ScalableObjectName:      so.Name,
		ScalableObjectNamespace: so.Namespace,
		ScalableObjectType:      "ScaledObject",
		GlobalHTTPTimeout:       5 * time.Second,
		TriggerName:             tr.Name,
		TriggerType:             tr.Type,
		TriggerMetadata:         md,
		TriggerIndex:            i,
		MetricType:              tr.MetricType,
		AuthParams:              map[string]string{},
		ResolvedEnv:             map[string]string{},
	})
}

// reading is what one trigger gives the HPA.
type reading struct {
	value  float64 // the metric, as KEDA hands it over (thousandths)
	target v2.MetricTarget
}

// read runs the scaler once; it fails unless KEDA returns exactly one value.
func read(ctx context.Context, s scalers.Scaler) (reading, error) {
	defer s.Close(ctx)
	specs := s.GetMetricSpecForScaling(ctx)
	if len(specs) != 1 || specs[0].External == nil {
		return reading{}, fmt.Errorf("%d metric specs", len(specs))
	}
	values, _, err := s.GetMetricsAndActivity(ctx, specs[0].External.Metric.Name)
	if err != nil {
		return reading{}, err
	}
	if len(values) != 1 {
		return reading{}, fmt.Errorf("%d values", len(values))
	}
	return reading{value: float64(values[0].Value.MilliValue()) / 1000, target: specs[0].External.Target}, nil
}

// hpaTolerance is the HPA's default: a usage ratio within 10% of 1 keeps
// the replicas.
const hpaTolerance = 0.1

// desired is the HPA's replica count for one external metric
// (replica_calculator.go: GetExternalMetricReplicas for Value,
// GetExternalPerPodMetricReplicas for AverageValue), in thousandths as the
// HPA computes it.
func (r reading) desired(current int) int {
	usage := math.Round(r.value * 1000)
	switch r.target.Type {
	case v2.AverageValueMetricType:
		per := float64(r.target.AverageValue.MilliValue())
		ratio := usage / (per * float64(current))
		if math.Abs(1-ratio) <= hpaTolerance {
			return current
		}
		return int(math.Ceil(usage / per))
	default:
		ratio := usage / float64(r.target.Value.MilliValue())
		if math.Abs(1-ratio) <= hpaTolerance {
			return current
		}
		return int(math.Ceil(ratio * float64(current)))
	}
}

func clamp(so kedav1alpha1.ScaledObject, n int) int {
	lo, hi := 1, 100
	if so.Spec.MinReplicaCount != nil {
		lo = int(*so.Spec.MinReplicaCount)
	}
	if so.Spec.MaxReplicaCount != nil {
		hi = int(*so.Spec.MaxReplicaCount)
	}
	return min(max(n, lo, 1), hi)
}

// fleet is one ScaledObject with what the test knows of it: the replicas
// it runs now and, for its queue trigger (the one reading gauges), the
// depth that holds them.
type fleet struct {
	so      kedav1alpha1.ScaledObject
	current int
	planned bool
	queue   int // index of the queue trigger, -1 if none
}

// setUp reads every trigger's and rule's series into engines and sets
// each fleet's queue depth so that its queue trigger asks for the replicas
// it runs: the plan's where there is one.
func setUp(t *testing.T, o output, e *engines) []fleet {
	t.Helper()
	for _, f := range o.rules {
		exprs, err := ruleExprs(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range exprs {
			if _, err := e.read(x); err != nil {
				t.Fatal(err)
			}
		}
	}
	var fleets []fleet
	for _, so := range o.objects {
		fl := fleet{so: so, queue: -1, current: clamp(so, 1)}
		for service, p := range o.plans {
			if so.Name == service || strings.HasPrefix(so.Name, service+"-") {
				fl.current, fl.planned = clamp(so, p.Replicas), true
			}
		}
		for i, tr := range so.Spec.Triggers {
			if tr.Type != "prometheus" {
				t.Fatalf("%s: trigger %s is %s, not prometheus", so.Name, tr.Name, tr.Type)
			}
			series, err := e.read(tr.Metadata["query"])
			if err != nil {
				t.Fatal(err)
			}
			gauges := len(series) > 0
			for _, s := range series {
				gauges = gauges && kind(s.name) == "gauge"
			}
			if gauges {
				if len(series) != 1 {
					t.Fatalf("%s: queue trigger %s reads %d series", so.Name, tr.Name, len(series))
				}
				fl.queue = i
			}
		}
		fleets = append(fleets, fl)
	}
	e.classify()
	for _, fl := range fleets {
		if fl.queue < 0 {
			continue
		}
		tr := fl.so.Spec.Triggers[fl.queue]
		var threshold float64
		if _, err := fmt.Sscan(tr.Metadata["threshold"], &threshold); err != nil {
			t.Fatalf("%s: threshold: %v", fl.so.Name, err)
		}
		series, _ := e.read(tr.Metadata["query"])
		// AverageValue: the sum over the replicas; Value: the replicas'
		// mean (one engine here) against the target.
		series[0].gauge = threshold
		if tr.MetricType == v2.AverageValueMetricType {
			series[0].gauge *= float64(fl.current)
		}
	}
	return fleets
}

// serve starts engines on 127.0.0.1 and Prometheus scraping it with the
// rule files, and waits until every trigger's query has a sample.
func serve(t *testing.T, e *engines, o output, fleets []fleet) string {
	t.Helper()
	server := startEngines(t, e, o.rules)
	ctx := context.Background()
	for _, fl := range fleets {
		for _, tr := range fl.so.Spec.Triggers {
			waitFor(t, 2*time.Minute, fl.so.Name+"/"+tr.Name+" has a sample", func() bool {
				n, err := instantSamples(ctx, server, tr.Metadata["query"])
				return err == nil && n > 0
			})
		}
	}
	return server
}

func TestKEDAScalerReadsEveryTrigger(t *testing.T) {
	o := compile(t)
	ctx := context.Background()
	triggers := 0
	t.Run("healthy: each trigger returns one value, the queue holds the plan and nothing scales out", func(t *testing.T) {
		e := newEngines(10, 0.001, 0)
		fleets := setUp(t, o, e)
		server := serve(t, e, o, fleets)
		for _, fl := range fleets {
			for i, tr := range fl.so.Spec.Triggers {
				triggers++
				// ignoreNullValues false: an empty result is an error, so
				// the value read is the series', not a default 0.
				s, err := scaler(fl.so, i, server, map[string]string{"ignoreNullValues": "false"})
				if err != nil {
					t.Fatalf("%s/%s: KEDA does not parse the trigger: %v", fl.so.Name, tr.Name, err)
				}
				r, err := read(ctx, s)
				if err != nil {
					t.Errorf("%s/%s: %v", fl.so.Name, tr.Name, err)
					continue
				}
				got := clamp(fl.so, r.desired(fl.current))
				t.Logf("%s/%s: value %g, target %s, %d replicas -> %d", fl.so.Name, tr.Name, r.value, target(r.target), fl.current, got)
				if got > fl.current {
					t.Errorf("%s/%s scales out from %d to %d while the SLO holds", fl.so.Name, tr.Name, fl.current, got)
				}
				if i == fl.queue && got != fl.current {
					t.Errorf("%s/%s: a queue of %d replicas' target asks for %d replicas", fl.so.Name, tr.Name, fl.current, got)
				}
			}
			if fl.planned && fl.queue >= 0 {
				t.Logf("%s: the queue at the plan's depth asks for the plan's %d replicas", fl.so.Name, fl.current)
			}
		}
	})
	t.Run("slow and failing: every fleet below its maximum scales out", func(t *testing.T) {
		e := newEngines(10, 100, 0.5)
		fleets := setUp(t, o, e)
		server := serve(t, e, o, fleets)
		for _, fl := range fleets {
			most, by := fl.current, ""
			for i, tr := range fl.so.Spec.Triggers {
				s, err := scaler(fl.so, i, server, map[string]string{"ignoreNullValues": "false"})
				if err != nil {
					t.Fatal(err)
				}
				r, err := read(ctx, s)
				if err != nil {
					t.Errorf("%s/%s: %v", fl.so.Name, tr.Name, err)
					continue
				}
				if n := clamp(fl.so, r.desired(fl.current)); n > most {
					most, by = n, tr.Name
				}
			}
			if most <= fl.current && fl.current < clamp(fl.so, math.MaxInt32) {
				t.Errorf("%s: stays at %d replicas while every request is slow and half fail", fl.so.Name, fl.current)
				continue
			}
			t.Logf("%s: %d -> %d replicas (by %s)", fl.so.Name, fl.current, most, by)
		}
	})
	t.Run("vanished series: KEDA errors where ignoreNullValues is false", func(t *testing.T) {
		server := startPrometheus(t, "", nil)
		visible, silent := 0, []string{}
		for _, so := range o.objects {
			for i, tr := range so.Spec.Triggers {
				s, err := scaler(so, i, server, nil)
				if err != nil {
					t.Fatal(err)
				}
				r, err := read(ctx, s)
				ignore := tr.Metadata["ignoreNullValues"]
				switch {
				case err != nil && ignore != "false":
					t.Errorf("%s/%s: KEDA errors with ignoreNullValues %q: %v", so.Name, tr.Name, ignore, err)
				case err == nil && ignore == "false":
					t.Errorf("%s/%s: KEDA reads %g without series despite ignoreNullValues false", so.Name, tr.Name, r.value)
				case err != nil:
					visible++
				default:
					silent = append(silent, fmt.Sprintf("%s/%s (minReplicaCount %v) reads %g", so.Name, tr.Name, ptrValue(so.Spec.MinReplicaCount), r.value))
				}
			}
		}
		t.Logf("vanished series: %d triggers take KEDA's error path (the HPA holds, the fallback acts); %d read a value silently (ignoreNullValues true)", visible, len(silent))
		for _, s := range silent {
			t.Logf("  SILENT %s", s)
		}
	})
	t.Logf("KEDA v2.20.2 Prometheus scaler: %d ScaledObjects, %d triggers", len(o.objects), triggers)
}

func target(m v2.MetricTarget) string {
	if m.AverageValue != nil {
		return "AverageValue " + m.AverageValue.String()
	}
	return "Value " + m.Value.String()
}

func TestKEDARejectsABrokenScaledObject(t *testing.T) {
	o := compile(t)
	so := o.objects[0]
	data, err := yaml.Marshal(so)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scaledObjects(bytes.Replace(data, []byte("minReplicaCount:"), []byte("minReplicas:"), 1)); err == nil {
		t.Error("a misspelled field decodes")
	}
	server := startPrometheus(t, "", nil)
	broken := map[string]map[string]string{
		"a threshold that is no number": {"threshold": "0.3x"},
		"a query returning two series":  {"query": `vector(1) or label_replace(vector(2), "a", "b", "", "")`},
	}
	for name, set := range broken {
		s, err := scaler(so, 0, server, set)
		if err == nil {
			_, err = read(context.Background(), s)
		}
		if err == nil {
			t.Errorf("%s: KEDA accepts it", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	utilization := so.DeepCopy()
	utilization.Spec.Triggers[0].MetricType = v2.UtilizationMetricType
	if _, err := scaler(*utilization, 0, server, nil); err == nil {
		t.Error("metricType Utilization: KEDA accepts it")
	}
}

// ptrValue prints an optional field: its value, or "unset".
func ptrValue(p *int32) any {
	if p == nil {
		return "unset"
	}
	return *p
}
