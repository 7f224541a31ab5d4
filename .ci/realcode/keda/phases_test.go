package keda

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	v2 "k8s.io/api/autoscaling/v2"
)

// loadRate is the load trigger's requests per second in its query.
var loadRate = regexp.MustCompile(`sum\(irate\([^\[]*\[[^\]]*\]\)\)`)

// replayPhase is one phase of `inferslo test --json`'s replay of a trace.
type replayPhase struct {
	Phase                    string
	Load, Queue              float64
	Replicas, Ready, Desired int
}

func TestKEDAAsksWhatTheReplaySaysThroughTheDiurnalDaysPhases(t *testing.T) {
	var res struct {
		Autoscaling []struct {
			SLO, Scenario string
			Phases        []replayPhase
		}
	}
	if err := json.Unmarshal(inferslo(t, "test", "--json", "examples/chat.yaml"), &res); err != nil {
		t.Fatal(err)
	}
	var phases []replayPhase
	for _, a := range res.Autoscaling {
		if a.SLO == "chat-ttft" && a.Scenario == "diurnal day" {
			phases = a.Phases
		}
	}
	if len(phases) != 4 {
		t.Fatalf("the replay of chat-ttft on the diurnal day has %d phases, want low, ramp, peak, fall", len(phases))
	}
	o := compile(t)
	var chat fleet
	for _, so := range o.objects {
		if so.Name == "chat" {
			chat = fleet{so: so}
		}
	}
	if chat.so.Name == "" {
		t.Fatal("no ScaledObject chat")
	}
	ctx := context.Background()
	// Every phase's engines and Prometheus start first: each waits minutes
	// for its windows to fill, side by side.
	servers := make([]string, len(phases))
	for i, p := range phases {
		// The phase's load, every request within the threshold (the
		// replay's slow share is the floor prompts slow whatever the load
		// keep, under what any trigger asks on), its queue.
		e := newEngines(p.Load, 0.01, 0)
		for _, tr := range chat.so.Spec.Triggers {
			series, err := e.read(tr.Metadata["query"])
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range series {
				if kind(s.name) == "gauge" {
					s.gauge = p.Queue
				}
			}
		}
		e.classify()
		servers[i] = startEngines(t, e, nil)
	}
	for i, p := range phases {
		server := servers[i]
		t.Run(p.Phase, func(t *testing.T) {
			// Every trigger reads a sample, and the load trigger's rate and
			// the climb it adds read a steady load once both windows hold
			// only its samples: four minutes. Steady, it reads what its
			// query gives with the phase's load in place of the rate.
			for _, tr := range chat.so.Spec.Triggers {
				q := tr.Metadata["query"]
				steady := math.NaN()
				if tr.Name == "load" {
					rps := loadRate.FindString(q)
					vs, err := instantValues(ctx, server, strings.ReplaceAll(q, rps, fmt.Sprintf("vector(%g)", p.Load)))
					if rps == "" || err != nil || len(vs) != 1 {
						t.Fatalf("the load trigger's query with the phase's load for its rate %q: %v %v", rps, vs, err)
					}
					steady = vs[0]
				}
				waitFor(t, 8*time.Minute, tr.Name+" reads the phase", func() bool {
					vs, err := instantValues(ctx, server, q)
					return err == nil && len(vs) == 1 && (math.IsNaN(steady) || math.Abs(vs[0]-steady) <= 0.02*steady)
				})
			}
			most, by := 0, ""
			for i, tr := range chat.so.Spec.Triggers {
				s, err := scaler(chat.so, i, server, nil)
				if err != nil {
					t.Fatal(err)
				}
				r, err := read(ctx, s)
				if err != nil {
					t.Fatalf("%s: %v", tr.Name, err)
				}
				// The HPA scales a Value metric's ratio by the ready pods.
				current := p.Replicas
				if r.target.Type == v2.ValueMetricType {
					current = p.Ready
				}
				n := r.desired(current)
				if n == current {
					n = p.Replicas
				}
				if n > most {
					most, by = n, tr.Name
				}
				t.Logf("%s: value %g, target %s -> %d", tr.Name, r.value, target(r.target), n)
			}
			got := clamp(chat.so, most)
			tolerance := max(1, p.Desired/10)
			if got < p.Desired-tolerance || got > p.Desired+tolerance {
				t.Errorf("at %.1f requests/s and %d replicas KEDA asks for %d (by %s), the replay for %d", p.Load, p.Replicas, got, by, p.Desired)
			}
			t.Logf("%s: %.1f requests/s, %d replicas: KEDA asks for %d (by %s), the replay for %d", p.Phase, p.Load, p.Replicas, got, by, p.Desired)
		})
	}
}

// startEngines starts the engines and a Prometheus scraping them with the
// rule files.
func startEngines(t *testing.T, e *engines, ruleFiles []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: e}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return startPrometheus(t, ln.Addr().String(), ruleFiles)
}
