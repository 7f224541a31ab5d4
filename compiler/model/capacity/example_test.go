package capacity_test

import (
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/model/capacity"
)

// The worked example of docs/kubernetes.md (Autoscaling and capacity): 1,000
// requests/s at 40ms mean service time against a 400ms TTFT target needs 58
// replicas.
func ExampleResult_Explain() {
	slo := model.SLO{
		Name:    "chat-ttft",
		Service: model.Service{Name: "chat"},
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
	// service chat (TTFT target from SLO chat-ttft)
	//   peak load          λ = 1000 requests/s, mean service time S = 0.04s, TTFT target T = 0.4s
	//   slots per replica  c = 1 (no replicaConcurrency given: one request at a time)
	//   Little's law       L = λ × S = 1000 × 0.04 = 40 requests in service
	//   wait model         each replica an M/M/c queue (Erlang C) offered a = L / N erlangs:
	//                        P(wait > T) = C(c, a) · exp(−(c − a) · T / S) ≤ 0.035, T / S = 10
	//   replicas           N = 58, the fewest that meet it:
	//                        N = 58: a = 0.6897, ρ = 68.97%, C(1, 0.6897) = 0.6897, P(wait > T) = 0.6897 · exp(−3.103) = 0.03096 ≤ 0.035
	//                        N = 57: a = 0.7018, ρ = 70.18%, C(1, 0.7018) = 0.7018, P(wait > T) = 0.7018 · exp(−2.982) = 0.03556 > 0.035
	//   ceiling            ρ = largest utilisation with P(wait > T) ≤ 0.035 = 0.7 (70%)
	//   queue per replica  Lq = C(c, c·ρ) · ρ / (1 − ρ) = 1.633333333333 → 1.63 waiting requests (KEDA queue target)
}
