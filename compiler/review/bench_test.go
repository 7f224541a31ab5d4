package review_test

import (
	"fmt"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/bench"
	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/review"
)

// BenchmarkRender is `inferslo render` on a fleet: compile, replay every
// service and draw the page. The peak heap should follow the replays in
// flight (one service per core), not the number of SLOs.
func BenchmarkRender(b *testing.B) {
	for _, n := range []int{30, 200} {
		b.Run(fmt.Sprintf("slos=%d", n), func(b *testing.B) {
			set := bench.FleetSet(b, n)
			var size int
			bench.Measure(b, n, func(int) {
				rv, err := review.Build(set, review.Options{})
				if err != nil {
					b.Fatal(err)
				}
				size = len(rv.Page)
			})
			b.ReportMetric(float64(size)/1e6, "page-MB")
		})
	}
}

// BenchmarkRenderExamples is `inferslo render examples`: the CPU seconds
// per SLO (goal: at most 1) and the page's size (goal: under 2 MB).
// `go test -run '^$' -bench RenderExamples -benchtime=1x ./compiler/review/`
func BenchmarkRenderExamples(b *testing.B) {
	set := slotest.Examples(b).Set
	measureRender(b, set)
}

// BenchmarkRenderOneSLO renders one errors SLO: what each render in the
// command's tests costs.
func BenchmarkRenderOneSLO(b *testing.B) {
	set := slotest.Parse(b, `apiVersion: inferslo/v1alpha1
kind: InferenceSLO
metadata: {name: chat}
spec:
  engine: vllm
  window: 28d
  objectives: [{sli: errors, target: 99%}]
`)
	measureRender(b, set)
}

// measureRender reports the CPU per SLO of building set's review page, and
// the page's size.
func measureRender(b *testing.B, set model.Set) {
	var size int
	bench.Measure(b, len(set.SLOs), func(int) {
		rv, err := review.Build(set, review.Options{})
		if err != nil {
			b.Fatal(err)
		}
		size = len(rv.Page)
	})
	b.ReportMetric(float64(size), "page-bytes")
}
