package rules

import (
	"fmt"
	"time"

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
		if interval == 0 {
			interval = time.Minute
		}
		c.Lag = max(c.Lag, time.Duration(links)*interval)
	}
	return Service{Name: s.Name, Groups: groups, Sources: s.Sources, checked: s.checked}, c, nil
}

// chain cuts one group into parts of size rules and counts the late reads
// on its longest path.
func chain(g rulefmt.RuleGroup, size int, p parser.Parser) ([]rulefmt.RuleGroup, int, error) {
	var parts []rulefmt.RuleGroup
	for i, r := range g.Rules {
		if i%size == 0 {
			q := g
			q.Name, q.Rules = model.ChainPart(g.Name, i/size+1), nil
			parts = append(parts, q)
		}
		parts[i/size].Rules = append(parts[i/size].Rules, r)
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

// Links counts, for each rule of a chained group's parts (given in order),
// the reads of a recording made in an earlier part on the longest path
// from raw series to the rule: how many evaluation intervals late, at
// most, a ruler evaluating each part on its own schedule gives its value.
func Links(parts []rulefmt.RuleGroup) ([][]int, error) { return linksOf(parts, query.NewParser()) }

func linksOf(parts []rulefmt.RuleGroup, p parser.Parser) ([][]int, error) {
	// made is a rule recording a name: its part and the late reads behind
	// it. A name recorded by several rules is read from all of them.
	type made struct{ part, links int }
	recorded := map[string][]made{}
	out := make([][]int, len(parts))
	for part, g := range parts {
		for i, r := range g.Rules {
			e, err := p.ParseExpr(r.Expr)
			if err != nil {
				return nil, fmt.Errorf("group %s, rule %d: %w", g.Name, i+1, err)
			}
			links := 0
			for _, sel := range query.Selectors(e) {
				for _, m := range recorded[sel.Name] {
					l := m.links
					if m.part != part {
						l++
					}
					links = max(links, l)
				}
			}
			if r.Record != "" {
				recorded[r.Record] = append(recorded[r.Record], made{part: part, links: links})
			}
			out[part] = append(out[part], links)
		}
	}
	return out, nil
}
