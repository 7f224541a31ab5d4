package rules

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/compiler/model"
)

func TestChainingCutsGroupsInOrderAndCountsTheLateReads(t *testing.T) {
	rec := func(name, expr string) rulefmt.Rule { return rulefmt.Rule{Record: name, Expr: expr} }
	g := rulefmt.RuleGroup{Name: "inferslo-a", Rules: []rulefmt.Rule{
		rec("f:rate", "sum(rate(f_total[5m]))"),
		rec("x:rate", "sum(rate(x_total[5m]))"),
		rec("y:rate", "sum(rate(y_total[5m]))"),
		rec("r:ratio", "y:rate / x:rate"),
		rec("b:burn", "r:ratio / 0.001"),
		{Alert: "Burn", Expr: "b:burn > 14.4 and r:ratio > 0"},
	}}
	tests := []struct {
		name  string
		limit int
		sizes []int
		links int
		err   string
	}{
		{"a limit of 0 keeps the group whole", 0, []int{6}, 0, ""},
		{"a group within the limit stays whole", 6, []int{6}, 0, ""},
		{"a ratio's two rates stay in one part, read one interval late, and the alert another", 2, []int{1, 2, 2, 1}, 2, ""},
		{"a part holds what it can in order", 3, []int{3, 3}, 1, ""},
		{"a limit below the rules one rule reads together is refused", 1, nil, 0, "2 rules are read together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, err := Service{Name: "a", Groups: []rulefmt.RuleGroup{g}}.Chained(tt.limit)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Groups) != len(tt.sizes) || c.Parts != len(tt.sizes) {
				t.Fatalf("%d groups (%d counted), want %d", len(s.Groups), c.Parts, len(tt.sizes))
			}
			var rules []rulefmt.Rule
			partOf := map[string]int{}
			for i, part := range s.Groups {
				for _, r := range part.Rules {
					partOf[r.Record+r.Alert] = i
				}
			}
			if partOf["x:rate"] != partOf["y:rate"] {
				t.Errorf("the ratio's rates are in parts %d and %d: it would divide two moments", partOf["x:rate"], partOf["y:rate"])
			}
			for i, part := range s.Groups {
				if len(part.Rules) != tt.sizes[i] {
					t.Errorf("part %d holds %d rules, want %d", i+1, len(part.Rules), tt.sizes[i])
				}
				if base, n := model.ChainOf(part.Name); base != g.Name || n != i+1 {
					t.Errorf("part %d is named %q, read back as group %q part %d", i+1, part.Name, base, n)
				}
				rules = append(rules, part.Rules...)
			}
			if len(rules) != len(g.Rules) {
				t.Fatalf("%d rules in the parts, %d in the group", len(rules), len(g.Rules))
			}
			for i := 1; i < len(rules); i++ {
				if partOf[rules[i].Record+rules[i].Alert] == partOf[rules[i-1].Record+rules[i-1].Alert] &&
					index(g.Rules, rules[i]) < index(g.Rules, rules[i-1]) {
					t.Errorf("%s comes before %s in a part: the order changed", rules[i-1].Record+rules[i-1].Alert, rules[i].Record+rules[i].Alert)
				}
			}
			if c.Links != tt.links {
				t.Errorf("%d links, want %d", c.Links, tt.links)
			}
		})
	}
}

func index(rs []rulefmt.Rule, r rulefmt.Rule) int {
	for i, q := range rs {
		if q.Record+q.Alert == r.Record+r.Alert {
			return i
		}
	}
	return -1
}

func TestAGroupNameWithoutAPartNumberIsItsOwnChain(t *testing.T) {
	for _, name := range []string{"inferslo-a", "inferslo-a/1", "inferslo-a/02", "inferslo-a/x", "/2"} {
		if base, n := model.ChainOf(name); base != name || n != 1 {
			t.Errorf("%q read as group %q part %d", name, base, n)
		}
	}
	if base, n := model.ChainOf(model.ChainPart("inferslo-a", 12)); base != "inferslo-a" || n != 12 {
		t.Errorf("part 12 read back as %q part %d", base, n)
	}
}

// An alert joins its windows by and/or: their values are never combined, so
// they may come from several parts, and a limit below the recordings the
// alert reads still chains; a ratio's two rates stay together.
func TestAnAlertsConditionsMaySpanParts(t *testing.T) {
	rec := func(name, expr string) rulefmt.Rule { return rulefmt.Rule{Record: name, Expr: expr} }
	g := rulefmt.RuleGroup{Name: "inferslo-a", Rules: []rulefmt.Rule{
		rec("x:rate", "sum(rate(x_total[5m]))"),
		rec("y:rate", "sum(rate(y_total[5m]))"),
		rec("r:ratio", "y:rate / x:rate"),
		rec("l:ratio", "avg_over_time(r:ratio[1h])"),
		rec("s:ratio", "avg_over_time(r:ratio[5m])"),
		{Alert: "Burn", Expr: "l:ratio > 0.01 and on () s:ratio > 0.01 and on () x:rate > 1 or r:ratio > 0.5"},
	}}
	s, _, err := Service{Name: "a", Groups: []rulefmt.RuleGroup{g}}.Chained(2)
	if err != nil {
		t.Fatalf("the alert's four conditions were held together: %v", err)
	}
	for _, part := range s.Groups {
		var names []string
		for _, r := range part.Rules {
			names = append(names, r.Record+r.Alert)
		}
		if slices.Contains(names, "x:rate") != slices.Contains(names, "y:rate") {
			t.Errorf("part %s holds %v: the ratio's two rates were cut apart", part.Name, names)
		}
	}
}
