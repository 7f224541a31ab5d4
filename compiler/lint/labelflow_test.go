package lint

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

func TestLabelFlowFollowsPrometheusResultLabels(t *testing.T) {
	tests := []struct {
		name, expr     string
		carries, drops []string
	}{
		{"a selector keeps every label", `up{job="a"}`, []string{"job", "instance", "pod"}, nil},
		{"sum by keeps only its labels", `sum by (pod) (rate(x_total[5m]))`, []string{"pod"}, []string{"instance"}},
		{"without drops its labels", `max without (instance) (up)`, []string{"job"}, []string{"instance"}},
		{"absent keeps its equality matchers only", `absent(up{job="a", instance=~"b.*"})`, []string{"job"}, []string{"instance"}},
		{"vector has no labels", `vector(1)`, nil, []string{"job"}},
		{"histogram_quantile drops le", `histogram_quantile(0.9, sum by (le, pod) (rate(x_bucket[5m])))`, []string{"pod"}, []string{"le", "instance"}},
		{"one-to-one on keeps the matching labels", `a / on (zone) b`, []string{"zone"}, []string{"instance"}},
		{"a comparison with on keeps them too", `a > on (zone) b`, []string{"zone"}, []string{"instance"}},
		{"ignoring drops its labels", `a / ignoring (code) b`, []string{"instance"}, []string{"code"}},
		{"group_left keeps the many side and adds its labels", `sum by (pod, ns) (a) * on (ns) group_left (team) b`, []string{"pod", "ns", "team"}, []string{"instance"}},
		{"group_left does not add what the one side lacks", `a * on (ns) group_left (team) sum by (ns) (b)`, []string{"instance"}, []string{"team"}},
		{"group_right keeps the right side", `sum by (ns) (a) * on (ns) group_right b`, []string{"instance"}, nil},
		{"label_replace adds its target", `label_replace(sum by (pod) (up), "host", "$1", "pod", "(.*)")`, []string{"host", "pod"}, []string{"instance"}},
		{"count_values adds its label", `count_values by (job) ("version", build_info)`, []string{"job", "version"}, []string{"instance"}},
		{"and keeps the left side", `sum by (pod) (a) and on (pod) b`, []string{"pod"}, []string{"instance"}},
		{"or carries what both sides carry", `up == 0 or absent(up{job="a"})`, []string{"job"}, []string{"instance"}},
		{"or of two selectors carries everything", `a or b`, []string{"instance"}, nil},
		{"a scalar operand keeps the vector's labels", `100 * sum by (pod) (a) > 5`, []string{"pod"}, []string{"instance"}},
		{"a constant or-branch the comparison drops never reaches the alert", `(sum by (job) (rate(a[5m])) or 0 * absent(a{job=~"etcd.*"})) >= 4`, []string{"job"}, []string{"instance"}},
		{"a constant or-branch the comparison keeps still counts", `(sum by (job) (rate(a[5m])) or 0 * absent(a{job=~"etcd.*"})) < 4`, nil, []string{"job"}},
		{"vector(0) under a comparison it fails is dropped too", `(sum by (pod) (a) or vector(0)) > 1`, []string{"pod"}, nil},
		{"a bool comparison keeps both branches", `(sum by (pod) (a) or vector(0)) > bool 1`, nil, []string{"pod"}},
		{"topk passes series through", `topk(3, up)`, []string{"instance"}, nil},
		{"a subquery keeps its labels", `max_over_time(sum by (pod) (rate(a[5m]))[1h:5m])`, []string{"pod"}, []string{"instance"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := parser.NewParser(parser.Options{}).ParseExpr(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			flow := labelFlow(e)
			for _, l := range tt.carries {
				if ok, _ := flow.carries(l); !ok {
					t.Errorf("%s: result should carry %s", tt.expr, l)
				}
			}
			for _, l := range tt.drops {
				if ok, by := flow.carries(l); ok || by == nil {
					t.Errorf("%s: result should not carry %s (dropped by %v)", tt.expr, l, by)
				}
			}
		})
	}
}
