package capacity_test

import (
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/capacity"
	"github.com/inferslo/inferslo/compiler/model"
)

// The worked example of the README: 1,000 requests/s at 40ms mean service time
// against a 400ms TTFT target needs 58 replicas.
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
	//   ceiling            ρ = largest utilisation with P(wait > T) = ρ·exp(−c·(1−ρ)·T/S) ≤ 0.035 (M/M/1)
	//                        = 0.7 (70%); the wait tail there is 0.0349
	//   replicas           N = ⌈L / (c × ρ)⌉ = ⌈40 / (1 × 0.7)⌉ = ⌈57.142857142857⌉ = 58
	//   queue per replica  Lq = ρ² / (1 − ρ) = 0.49 / 0.3 = 1.633333333333 → 1.63 waiting requests (KEDA queue target)
}
