package synth

import (
	"fmt"
	"strings"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/prometheus/prometheus/model/labels"
)

// thresholdSeries builds one pod's histogram for a threshold SLI, from the
// one bucket selector of its query: buckets at half, once and twice the
// threshold. A good request observes in the bucket on the good side of the
// threshold and a bad one on the other, so the percentile of a slice of good
// requests meets the threshold and that of a slice of bad ones does not,
// whatever the quantile.
func thresholdSeries(slo model.SLO) ([]Series, error) {
	th := slo.SLI.Threshold
	sels, err := selectorsOf(th.Query.Expr)
	if err != nil {
		return nil, err
	}
	if len(sels) != 1 {
		return nil, fmt.Errorf("the threshold query reads %d selectors; the simulator models one histogram", len(sels))
	}
	base, err := Satisfying(sels[0].matchers)
	if err != nil {
		return nil, err
	}
	if name := base[query.MetricNameLabel]; !strings.HasSuffix(name, "_bucket") {
		return nil, fmt.Errorf("the threshold query reads %q, not the _bucket series of a classic histogram", name)
	}
	if _, ok := base["le"]; ok {
		return nil, fmt.Errorf("the threshold query selects one le; the simulator models every bucket")
	}
	v := th.Value.Float()
	if v <= 0 {
		return nil, fmt.Errorf("threshold %g is not a positive bucket boundary", v)
	}
	// Requests below the threshold are good for <= and <, bad for >= and >.
	below := th.Op == "<=" || th.Op == "<"
	n, k := 1.0, -1.0 // requests at or below v: the good ones
	if !below {
		n, k = 0, 1
	}
	var out []Series
	for _, b := range []struct {
		le     string
		nC, kC float64
	}{{labels.FormatOpenMetricsFloat(v / 2), 0, 0}, {labels.FormatOpenMetricsFloat(v), n, k}, {labels.FormatOpenMetricsFloat(2 * v), 1, 0}, {"+Inf", 1, 0}} {
		lb := labels.NewBuilder(labels.FromMap(base))
		lb.Set("le", b.le)
		out = append(out, Series{Labels: lb.Labels(), CoefN: b.nC, coefK: b.kC})
	}
	return out, nil
}
