package synth

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/prometheus/prometheus/model/labels"
)

// Group is one group's synthetic series and its name, `model_name="x"`.
type Group struct {
	Name     string
	Workload *Workload
}

// Grouped builds the series of n groups of a grouped SLO: the SLO's
// workload with every grouping label set to one value per group, named
// after the engine (vllm-a, vllm-b) or else the SLO. Other values are tried
// until every group's series drive the SLI exactly (a selector may
// constrain a grouping label); a grouping label the selector pins to one
// value leaves one group, which no scenario can split.
func Grouped(slo model.SLO, shape Shape, n int) ([]Group, error) {
	proto, err := New(slo, shape)
	if err != nil {
		return nil, err
	}
	have := map[string]string{}
	if len(proto.Series) > 0 {
		have = proto.Series[0].Labels.Map()
	}
	var bases []func(label string) string
	if slo.Inference != nil {
		bases = append(bases, func(string) string { return slo.Inference.Engine })
	}
	bases = append(bases, func(string) string { return slo.Name }, func(l string) string { return have[l] })
	var lastErr error
	for _, base := range bases {
		var out []Group
		for i := range n {
			suffix := string(rune('a' + i))
			values := map[string]string{}
			var name []string
			for _, l := range slo.GroupBy {
				v := suffix
				if b := base(l); b != "" {
					v = b + "-" + suffix
				}
				values[l] = v
				name = append(name, l+"="+strconv.Quote(v))
			}
			w, err := New(slo, shape)
			if err != nil {
				return nil, err
			}
			for i := range w.Series {
				lb := labels.NewBuilder(w.Series[i].Labels)
				for k, v := range values {
					lb.Set(k, v)
				}
				w.Series[i].Labels = lb.Labels()
			}
			if err := w.check(slo); err != nil {
				lastErr = err
				break
			}
			out = append(out, Group{Name: strings.Join(name, ","), Workload: w})
		}
		if len(out) == n {
			return out, nil
		}
	}
	return nil, fmt.Errorf("no %d values of %s select the SLI's series (the selector may pin them): %w", n, strings.Join(slo.GroupBy, ", "), lastErr)
}
