package prom

import (
	"fmt"
	"slices"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/rules"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
)

// ruleGroup is one group of a parsed rule file.
type ruleGroup struct {
	file  string
	group rulefmt.RuleGroup
}

// RuleIndex is rule files parsed and validated once, in file then group
// order: parsing every file for every scenario of every SLO made a run
// quadratic in the number of SLOs.
type RuleIndex []ruleGroup

// IndexRules parses rule files, in path order.
func IndexRules(files artifact.Set) (RuleIndex, error) {
	files = slices.Clone(files)
	files.Sort()
	p := query.NewParser()
	var out RuleIndex
	for _, f := range files {
		rgs, errs := rulefmt.Parse(f.Data, false, prommodel.UTF8Validation, p, promslog.NewNopLogger())
		if len(errs) > 0 {
			return nil, fmt.Errorf("load rules: %s: %w", f.Path, errs[0])
		}
		for _, g := range rgs.Groups {
			out = append(out, ruleGroup{file: f.Path, group: g})
		}
	}
	return out, nil
}

// Selected returns the groups whose name keep accepts.
func (x RuleIndex) Selected(keep func(name string) bool) RuleIndex {
	var out RuleIndex
	for _, g := range x {
		if keep(g.group.Name) {
			out = append(out, g)
		}
	}
	return out
}

// Groups lists the groups, in index order.
func (x RuleIndex) Groups() []rulefmt.RuleGroup {
	out := make([]rulefmt.RuleGroup, len(x))
	for i, g := range x {
		out[i] = g.group
	}
	return out
}

// Rewritten is a copy of the index with every rule passed through f.
func (x RuleIndex) Rewritten(f func(rulefmt.Rule) rulefmt.Rule) RuleIndex {
	out := make(RuleIndex, len(x))
	for i, g := range x {
		rs := make([]rulefmt.Rule, len(g.group.Rules))
		for j, r := range g.group.Rules {
			rs[j] = f(r)
		}
		g.group.Rules = rs
		out[i] = g
	}
	return out
}

// ByName indexes the groups by name; the parts of a chained group
// (model.ChainPart) index under the group's name.
func (x RuleIndex) ByName() map[string]RuleIndex {
	out := map[string]RuleIndex{}
	for _, g := range x {
		name, _ := model.ChainOf(g.group.Name)
		out[name] = append(out[name], g)
	}
	return out
}

// loadGroups builds rule groups ready to evaluate from the index.
func loadGroups(x RuleIndex, opts *rules.ManagerOptions) ([]*rules.Group, error) {
	p := query.NewParser()
	files := map[string]*rulefmt.RuleGroups{}
	var ids []string
	for _, g := range x {
		if files[g.file] == nil {
			files[g.file] = &rulefmt.RuleGroups{}
			ids = append(ids, g.file)
		}
		files[g.file].Groups = append(files[g.file].Groups, g.group)
	}
	opts.GroupLoader = memLoader{files: files, p: p}
	opts.Parser = p
	m := rules.NewManager(opts)
	loaded, errs := m.LoadGroups(time.Minute, labels.EmptyLabels(), "", nil, false, ids...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("load rules: %w", errs[0])
	}
	var out []*rules.Group
	for _, g := range loaded {
		out = append(out, g)
	}
	sortGroups(out)
	return out, nil
}
