package rules

import (
	"testing"

	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/inferslo/inferslo/compiler/model"
)

func TestChainingCutsGroupsInOrderAndCountsTheLateReads(t *testing.T) {
	rec := func(name, expr string) rulefmt.Rule { return rulefmt.Rule{Record: name, Expr: expr} }
	g := rulefmt.RuleGroup{Name: "inferslo-a", Rules: []rulefmt.Rule{
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
	}{
		{"a limit of 0 keeps the group whole", 0, []int{5}, 0},
		{"a group within the limit stays whole", 5, []int{5}, 0},
		{"a ratio cut from its rates reads them one interval late, and the alert another", 2, []int{2, 2, 1}, 2},
		{"parts of one rule put a late read on every link", 1, []int{1, 1, 1, 1, 1}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, err := Service{Name: "a", Groups: []rulefmt.RuleGroup{g}}.Chained(tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Groups) != len(tt.sizes) || c.Parts != len(tt.sizes) {
				t.Fatalf("%d groups (%d counted), want %d", len(s.Groups), c.Parts, len(tt.sizes))
			}
			var rules []rulefmt.Rule
			for i, part := range s.Groups {
				if len(part.Rules) != tt.sizes[i] {
					t.Errorf("part %d holds %d rules, want %d", i+1, len(part.Rules), tt.sizes[i])
				}
				if base, n := model.ChainOf(part.Name); base != g.Name || n != i+1 {
					t.Errorf("part %d is named %q, read back as group %q part %d", i+1, part.Name, base, n)
				}
				rules = append(rules, part.Rules...)
			}
			for i := range rules {
				if rules[i].Record+rules[i].Alert != g.Rules[i].Record+g.Rules[i].Alert {
					t.Errorf("rule %d is %s, want %s: the order changed", i+1, rules[i].Record+rules[i].Alert, g.Rules[i].Record+g.Rules[i].Alert)
				}
			}
			if c.Links != tt.links {
				t.Errorf("%d links, want %d", c.Links, tt.links)
			}
		})
	}
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
