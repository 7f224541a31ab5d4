package keda

import (
	"github.com/prometheus/prometheus/model/rulefmt"
)

// ruleExprs are the expressions of a rule file's rules.
func ruleExprs(file string) ([]string, error) {
	groups, errs := rulefmt.ParseFile(file, false)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	var out []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			out = append(out, r.Expr)
		}
	}
	return out, nil
}
