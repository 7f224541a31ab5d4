package rules

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
)

// Chain says what splitting a service's groups cost.
type Chain struct {
	// Parts is the number of groups written, Split how many of the
	// service's groups were cut.
	Parts, Split int
	// Links is the most reads of a recording from an earlier part on any
	// path from raw series to a rule, Lag the evaluation time they add at
	// most: a ruler evaluates each group on its own schedule, so each
	// such read can be up to one interval old.
	Links int
	Lag   time.Duration
}

// Chained returns the service with every group of more than limit rules
// cut into parts of at most limit rules, in the rules' order, named
// <group>, <group>/2, <group>/3. limit 0 leaves the groups whole. The rules
// are those Services validated, so the parts need no second check.
func (s Service) Chained(limit int) (Service, Chain, error) {
	c := Chain{Parts: len(s.Groups)}
	if limit <= 0 {
		return s, c, nil
	}
	var groups []rulefmt.RuleGroup
	p := query.NewParser()
	for _, g := range s.Groups {
		if len(g.Rules) <= limit {
			groups = append(groups, g)
			continue
		}
		parts, links, err := chain(g, limit, p)
		if err != nil {
			return Service{}, Chain{}, fmt.Errorf("group %s: %w", g.Name, err)
		}
		groups = append(groups, parts...)
		c.Parts += len(parts) - 1
		c.Split++
		c.Links = max(c.Links, links)
		interval := time.Duration(g.Interval)
		interval = cmp.Or(interval, time.Minute)
		c.Lag = max(c.Lag, time.Duration(links)*interval)
	}
	return Service{Name: s.Name, Groups: groups, Sources: s.Sources, checked: s.checked}, c, nil
}

// chain cuts one group into parts of at most size rules and counts the
// late reads on its longest path. The recordings one rule combines by value
// stay in one part: a ruler evaluates each part at its own moment, and a
// ratio whose numerator and denominator came from two parts would divide
// values of two moments (at a burn's start or end, a rate of one moment
// over the total of another). Conditions joined by and, or and unless
// compare nothing across their sides, so an alert's windows may come from
// several parts, each up to one interval late. Within that, rules keep
// their order and fill each part.
func chain(g rulefmt.RuleGroup, size int, p parser.Parser) ([]rulefmt.RuleGroup, int, error) {
	reads, err := combinedOf(g.Rules, p)
	if err != nil {
		return nil, 0, err
	}
	// unit joins the rules whose recordings one rule combines by value.
	unit := make([]int, len(g.Rules))
	for i := range unit {
		unit[i] = i
	}
	var root func(int) int
	root = func(i int) int {
		for unit[i] != i {
			unit[i] = unit[unit[i]]
			i = unit[i]
		}
		return i
	}
	for _, rs := range reads {
		for _, j := range rs[min(1, len(rs)):] {
			unit[root(j)] = root(rs[0])
		}
	}
	members := map[int]int{}
	for i := range g.Rules {
		members[root(i)]++
	}
	partOf := map[int]int{}
	assigned := make([]int, len(g.Rules))
	var sizes []int
	for i := range g.Rules {
		u := root(i)
		part, ok := partOf[u]
		if !ok {
			n := members[u]
			if n > size {
				return nil, 0, fmt.Errorf("%d rules are read together (one rule combines what each of them records) and must share a group, more than %d: raise --max-rules-per-group", n, size)
			}
			if len(sizes) == 0 || sizes[len(sizes)-1]+n > size {
				sizes = append(sizes, 0)
			}
			part = len(sizes) - 1
			sizes[part] += n
			partOf[u] = part
		}
		assigned[i] = part
	}
	parts := make([]rulefmt.RuleGroup, len(sizes))
	for k := range parts {
		parts[k] = g
		parts[k].Name, parts[k].Rules = model.ChainPart(g.Name, k+1), nil
	}
	for i, r := range g.Rules {
		parts[assigned[i]].Rules = append(parts[assigned[i]].Rules, r)
	}
	links, err := linksOf(parts, p)
	if err != nil {
		return nil, 0, err
	}
	most := 0
	for _, part := range links {
		for _, l := range part {
			most = max(most, l)
		}
	}
	return parts, most, nil
}

// readsOf lists, for each rule, the rules of the list whose recordings it
// may read: same name, and no matcher refusing a label the recording sets
// (labels it inherits are unknown, so they match).
func readsOf(rs []rulefmt.Rule, p parser.Parser) ([][]int, error) {
	out := make([][]int, len(rs))
	for i, r := range rs {
		e, err := p.ParseExpr(r.Expr)
		if err != nil {
			return nil, fmt.Errorf("rule %d (%s): %w", i+1, r.Record+r.Alert, err)
		}
		out[i] = recordersOf(rs, i, query.Selectors(e))
	}
	return out, nil
}

// recordersOf lists the rules of rs but the i-th whose recordings one of
// sels may select.
func recordersOf(rs []rulefmt.Rule, i int, sels []*parser.VectorSelector) []int {
	var out []int
	for j, w := range rs {
		if j != i && w.Record != "" && slices.ContainsFunc(sels, func(sel *parser.VectorSelector) bool { return recordedBy(sel, w) }) {
			out = append(out, j)
		}
	}
	return out
}

// combinedOf lists, for each rule, the sets of rules of the list whose
// recordings it combines by value: the selectors under both sides of each
// binary operation other than and, or and unless.
func combinedOf(rs []rulefmt.Rule, p parser.Parser) ([][]int, error) {
	var out [][]int
	for i, r := range rs {
		e, err := p.ParseExpr(r.Expr)
		if err != nil {
			return nil, fmt.Errorf("rule %d (%s): %w", i+1, r.Record+r.Alert, err)
		}
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			b, ok := n.(*parser.BinaryExpr)
			if !ok || b.Op.IsSetOperator() {
				return nil
			}
			if set := recordersOf(rs, i, append(query.Selectors(b.LHS), query.Selectors(b.RHS)...)); len(set) > 1 {
				out = append(out, set)
			}
			return nil
		})
	}
	return out, nil
}

// recordedBy tells whether sel may select what w records.
func recordedBy(sel *parser.VectorSelector, w rulefmt.Rule) bool {
	for _, m := range sel.LabelMatchers {
		v, ok := w.Labels[m.Name]
		if m.Name == labels.MetricName {
			v, ok = w.Record, true
		}
		if ok && !m.Matches(v) {
			return false
		}
	}
	return true
}

// Links counts, for each rule of a chained group's parts (given in order),
// the reads of a recording made in another part on the longest path from
// raw series to the rule: how many evaluation intervals late, at most, a
// ruler evaluating each part on its own schedule gives its value.
func Links(parts []rulefmt.RuleGroup) ([][]int, error) { return linksOf(parts, query.NewParser()) }

func linksOf(parts []rulefmt.RuleGroup, p parser.Parser) ([][]int, error) {
	var all []rulefmt.Rule
	var partOf []int
	for k, g := range parts {
		all = append(all, g.Rules...)
		for range g.Rules {
			partOf = append(partOf, k)
		}
	}
	reads, err := readsOf(all, p)
	if err != nil {
		return nil, err
	}
	// The longest path, by relaxing every read until nothing changes; a
	// cycle (a rule reading its own recording's past) stops after as many
	// rounds as rules.
	links := make([]int, len(all))
	for round := 0; round < len(all); round++ {
		changed := false
		for i, rs := range reads {
			for _, j := range rs {
				l := links[j]
				if partOf[j] != partOf[i] {
					l++
				}
				if l > links[i] {
					links[i], changed = l, true
				}
			}
		}
		if !changed {
			break
		}
	}
	out := make([][]int, len(parts))
	for i, l := range links {
		out[partOf[i]] = append(out[partOf[i]], l)
	}
	return out, nil
}
