package review_test

import (
	"fmt"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/bench"
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
