package capacity_test

import (
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
)

// The worked example of docs/kubernetes.md (Autoscaling and capacity): 1,000
// requests/s at 40ms mean service time against a 400ms TTFT target at 99%
// (examples/rag-chat.yaml) needs 41 replicas of one slot behind a
// load-aware gateway.
func ExampleResult_Explain() {
	slo := model.SLO{
		Name:      "rag-chat-ttft",
		Service:   model.Service{Name: "rag-chat"},
		Objective: model.NewDecimal(99, 100),
		Inference: &model.Inference{
			Role:      "ttft",
			Threshold: model.NewDecimal(4, 10),
		},
		Autoscaling: &model.Autoscaling{Capacity: model.Capacity{
			PeakRPS:         model.NewDecimal(1000, 1),
			MeanServiceTime: 40 * time.Millisecond,
		}},
	}
	plan, err := capacity.Plan(slo)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(plan.Explain())
	// Output:
	// service rag-chat (TTFT target from SLO rag-chat-ttft)
	//   peak load          λ = 1000 requests/s, mean service time S = 0.04s, TTFT target T = 0.4s
	//   slots per replica  c = 1 (no replicaConcurrency given: one request at a time)
	//   Little's law       L = λ × S = 1000 × 0.04 = 40 requests in service
	//   TTFT model         prefill, then the wait in one queue before the fleet's k = N · c slots
	//                        (a load-aware gateway routes to a free slot: M/M/k, Erlang C)
	//   prefill (assumed)  60% in 0.08s, 39.7% in 0.16s, 0.3% in 0.64s (past T whatever the load)
	//   objective          miss = Σ share · C(k, L) · exp(−(k − L) · (T − prefill) / S) ≤ 0.01, the error budget
	//   replicas           N = 41, the fewest that meet it:
	//                        N = 41: k = 41, ρ = 97.56%, C(41, 40) = 0.8229, miss = 0.003975 ≤ 0.01
	//                        N = 40: k = 40, ρ = 100%, L ≥ k: the queue grows without bound
	//   queue per replica  C(k, L) · ρ / (1 − ρ) / N = 0.8028 → 0.8 waiting requests (KEDA queue target)
	//                        raised to 1: a target under one waiting request per replica lets the autoscaler run away
}
