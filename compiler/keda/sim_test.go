package keda

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

// withSLIs gives the chat fixtures the event queries the rules backend needs.
func withSLIs(slos []model.SLO) []model.SLO {
	const sel = `model_name="llama-3-70b"`
	for i := range slos {
		switch slos[i].Name {
		case "chat-ttft":
			slos[i].SLI = model.SLI{
				Counter: true,
				Total:   &model.Query{Expr: `vllm:time_to_first_token_seconds_count{` + sel + `}`},
				// Slow requests as bad events: count minus the 250ms bucket.
				// (A good-events form hits a duplicate-labelset error in the
				// rules backend today; reported to the lead.)
				Bad: &model.Query{Expr: `vllm:time_to_first_token_seconds_count{` + sel + `} - ignoring (le) vllm:time_to_first_token_seconds_bucket{le="0.25",` + sel + `}`},
			}
		case "chat-errors":
			slos[i].SLI = model.SLI{
				Counter: true,
				Total:   &model.Query{Expr: `vllm:request_success_total{` + sel + `}`},
				Bad:     &model.Query{Expr: `vllm:request_success_total{finished_reason="error",` + sel + `}`},
			}
		}
	}
	return slos
}

// Two vLLM pods for 30 minutes: TTFT mostly under 100ms with a slow tail,
// 3 and 1 requests waiting, 1% of requests failing. The extra model and
// the extra pod labels would multiply any query that forgot to aggregate.
const vllmSeries = `
load 1m
  vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",pod="a",le="0.1"} 0+80x30
  vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",pod="a",le="0.25"} 0+95x30
  vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",pod="a",le="0.5"} 0+100x30
  vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",pod="a",le="+Inf"} 0+100x30
  vllm:time_to_first_token_seconds_count{model_name="llama-3-70b",pod="a"} 0+100x30
  vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",pod="b",le="0.1"} 0+80x30
  vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",pod="b",le="0.25"} 0+95x30
  vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",pod="b",le="0.5"} 0+100x30
  vllm:time_to_first_token_seconds_bucket{model_name="llama-3-70b",pod="b",le="+Inf"} 0+100x30
  vllm:time_to_first_token_seconds_count{model_name="llama-3-70b",pod="b"} 0+100x30
  vllm:time_to_first_token_seconds_bucket{model_name="other",pod="c",le="+Inf"} 0+100x30
  vllm:num_requests_waiting{model_name="llama-3-70b",pod="a"} 3x30
  vllm:num_requests_waiting{model_name="llama-3-70b",pod="b"} 1x30
  vllm:num_requests_waiting{model_name="other",pod="c"} 50x30
  vllm:request_success_total{model_name="llama-3-70b",pod="a",finished_reason="stop"} 0+99x30
  vllm:request_success_total{model_name="llama-3-70b",pod="a",finished_reason="error"} 0+1x30
`

// TestTriggerQueriesReturnOneSampleOnSimulatedVLLM runs the real rules
// backend's groups on synthetic vLLM series in Prometheus's rule engine, then
// evaluates every trigger query: each must return exactly one sample, so the
// series it reads exist (engine or recording) and it aggregates to one element.
func TestTriggerQueriesReturnOneSampleOnSimulatedVLLM(t *testing.T) {
	slos := withSLIs(chatSLOs())
	for i := range slos {
		slos[i].ScaleOnBurn = true // the errors SLO opted in, to read both burns
	}
	s := set(slos...)
	content := ruleFile(t, s)
	ruleFile := filepath.Join(t.TempDir(), "chat.rules.yaml")
	if err := os.WriteFile(ruleFile, content, 0o644); err != nil {
		t.Fatal(err)
	}

	end := 30 * time.Minute
	query := ruleEngine(t, vllmSeries, ruleFile, end)

	data := build(t, s)
	values, inner := map[string]float64{}, map[string]float64{}
	for _, tr := range decode(t, data).Spec.Triggers {
		q, _ := tr.Metadata["query"].(string)
		vec := query(q)
		if len(vec) != 1 {
			t.Errorf("trigger %s: %s returned %v, want exactly one sample", tr.Name, q, vec)
			continue
		}
		values[tr.Name] = vec[0]
		// What a bounded trigger reads before its bound.
		if i := strings.LastIndex(q, ", "); strings.HasPrefix(q, "clamp_max(") && i > 0 {
			if vec := query(q[len("clamp_max("):i]); len(vec) == 1 {
				inner[tr.Name] = vec[0]
			}
		}
	}
	// Spot-check the values: the queue averages both pods of this model
	// only, and 5% of this model's requests are over the 250ms bucket;
	// both read at most 1.5 times their targets.
	if values["queue"] != 1.5 || inner["queue"] != 2 {
		t.Errorf("queue = %v (%v unbounded), want (3 + 1) / 2 = 2 over 1 read as 1.5", values["queue"], inner["queue"])
	}
	if share := inner["ttft-chat-ttft"]; math.Abs(share-0.05/0.008) > 1e-9 || values["ttft-chat-ttft"] != 1.5 {
		t.Errorf("ttft slow share = %v (%v unbounded), want 5 of 100 over the 0.008 allowed read as 1.5", values["ttft-chat-ttft"], share)
	}
	// 1% errors against a 0.1% budget burns at 10x, 5% slow against a 1%
	// budget at 5x: both capped at doubling the fleet per sync.
	for _, n := range []string{"burn-chat-errors", "burn-chat-ttft"} {
		if burn := values[n]; burn != 2 {
			t.Errorf("%s = %v, want the cap 2", n, burn)
		}
	}
}

// ruleEngine loads series (promqltest's load syntax) and a rule file into
// Prometheus' engine, evaluates the rule groups every 30s up to end as
// Prometheus would, and returns an instant query at end.
func ruleEngine(t *testing.T, load, ruleFile string, end time.Duration) func(string) []float64 {
	t.Helper()
	suite, err := promqltest.NewLazyLoader(load, promqltest.LazyLoaderOpts{EnableAtModifier: true, EnableNegativeOffset: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { suite.Close() })
	mgr := promrules.NewManager(&promrules.ManagerOptions{
		QueryFunc:  promrules.EngineQueryFunc(suite.QueryEngine(), suite.Storage()),
		Appendable: suite.Storage(),
		Queryable:  suite.Storage(),
		Context:    context.Background(),
		NotifyFunc: func(context.Context, string, ...*promrules.Alert) {},
		Logger:     slog.New(slog.DiscardHandler),
		Parser:     parser.NewParser(parser.Options{}),
	})
	loaded, errs := mgr.LoadGroups(30*time.Second, labels.EmptyLabels(), "", nil, false, ruleFile)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for ts := time.Duration(0); ts <= end; ts += 30 * time.Second {
		at := time.Unix(0, 0).UTC().Add(ts)
		suite.WithSamplesTill(at, func(err error) {
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range loaded {
				g.Eval(suite.Context(), at)
			}
		})
	}
	at := time.Unix(0, 0).UTC().Add(end)
	return func(q string) []float64 {
		t.Helper()
		query, err := suite.QueryEngine().NewInstantQuery(suite.Context(), suite.Storage(), nil, q, at)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer query.Close()
		res := query.Exec(suite.Context())
		if res.Err != nil {
			t.Fatalf("%s: %v", q, res.Err)
		}
		var out []float64
		switch v := res.Value.(type) {
		case promql.Vector:
			for _, s := range v {
				out = append(out, s.F)
			}
		case promql.Scalar:
			out = append(out, v.V)
		}
		return out
	}
}

// ruleFile is one rule file holding every service's validated rule groups.
func ruleFile(t *testing.T, set model.Set) []byte {
	t.Helper()
	services, err := rules.Services(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	var groups []rulefmt.RuleGroup
	for _, s := range services {
		groups = append(groups, s.Groups...)
	}
	return rules.AppendGroups(nil, 0, groups, rules.GroupStyle{})
}
