package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// resultLabels is what lint knows of the labels a query's result series
// carry: either any label of the series it reads except some that were
// dropped (open), or only a known set (closed), as Prometheus' engine
// builds result labels.
type resultLabels struct {
	open bool
	// has holds, when closed, every label the result can carry.
	has map[string]bool
	// dropped holds, when open, labels known gone and the node dropping each.
	dropped map[string]parser.Node
	// closer is, when closed, the node that fixed the set.
	closer parser.Node
}

func openLabels() resultLabels {
	return resultLabels{open: true, dropped: map[string]parser.Node{}}
}

func closedLabels(by parser.Node, names ...string) resultLabels {
	r := resultLabels{has: map[string]bool{}, closer: by}
	for _, n := range names {
		r.has[n] = true
	}
	return r
}

// carries says whether a result series can carry the label, and if not,
// which node removed it.
func (r resultLabels) carries(name string) (bool, parser.Node) {
	if r.open {
		n, gone := r.dropped[name]
		return !gone, n
	}
	return r.has[name], r.closer
}

func (r resultLabels) clone() resultLabels {
	return resultLabels{open: r.open, has: maps.Clone(r.has), dropped: maps.Clone(r.dropped), closer: r.closer}
}

// keep narrows to the given labels (by, on).
func (r resultLabels) keep(by parser.Node, names []string) resultLabels {
	out := closedLabels(by)
	for _, n := range names {
		if ok, _ := r.carries(n); ok {
			out.has[n] = true
		}
	}
	return out
}

// drop removes labels (without, ignoring, histogram_quantile's le).
func (r resultLabels) drop(by parser.Node, names ...string) resultLabels {
	out := r.clone()
	for _, n := range names {
		if out.open {
			out.dropped[n] = by
		} else {
			delete(out.has, n)
		}
	}
	return out
}

// add sets a label (label_replace, count_values, group_left).
func (r resultLabels) add(names ...string) resultLabels {
	out := r.clone()
	for _, n := range names {
		if out.open {
			delete(out.dropped, n)
		} else {
			out.has[n] = true
		}
	}
	return out
}

// either is the result of a or b: a series may come from either side, so
// a label is carried only when both sides carry it (a template reading a
// label only one side has renders empty whenever the other side fires,
// as absent() does in "x == 0 or absent(x)").
func either(a, b resultLabels) resultLabels {
	switch {
	case a.open && b.open:
		out := a.clone()
		for n, by := range b.dropped {
			if _, ok := out.dropped[n]; !ok {
				out.dropped[n] = by
			}
		}
		return out
	case a.open:
		return either(b, a)
	}
	out := closedLabels(a.closer)
	for n := range a.has {
		if ok, _ := b.carries(n); ok {
			out.has[n] = true
		}
	}
	return out
}

// labelFlow computes the labels an expression's result can carry.
func labelFlow(e parser.Expr) resultLabels {
	switch v := e.(type) {
	case *parser.ParenExpr:
		return labelFlow(v.Expr)
	case *parser.StepInvariantExpr:
		return labelFlow(v.Expr)
	case *parser.UnaryExpr:
		return labelFlow(v.Expr)
	case *parser.SubqueryExpr:
		return labelFlow(v.Expr)
	case *parser.MatrixSelector:
		return labelFlow(v.VectorSelector)
	case *parser.NumberLiteral, *parser.StringLiteral:
		return closedLabels(v)
	case *parser.VectorSelector:
		return openLabels()
	case *parser.AggregateExpr:
		return aggregateFlow(v)
	case *parser.Call:
		return callFlow(v)
	case *parser.BinaryExpr:
		return binaryFlow(v)
	}
	return openLabels()
}

func aggregateFlow(v *parser.AggregateExpr) resultLabels {
	in := labelFlow(v.Expr)
	switch v.Op {
	case parser.TOPK, parser.BOTTOMK, parser.LIMITK, parser.LIMIT_RATIO:
		return in // series pass through whole
	}
	var out resultLabels
	if v.Without {
		out = in.drop(v, append(slices.Clone(v.Grouping), query.MetricNameLabel)...)
	} else {
		out = in.keep(v, v.Grouping)
	}
	if v.Op == parser.COUNT_VALUES {
		if s, ok := query.Unparen(v.Param).(*parser.StringLiteral); ok {
			out = out.add(s.Val)
		}
	}
	return out
}

func callFlow(v *parser.Call) resultLabels {
	switch v.Func.Name {
	case "absent", "absent_over_time":
		// absent() keeps only the equality matchers of its selector.
		var names []string
		for _, vs := range selectorsOf(v.Args) {
			for _, m := range vs.LabelMatchers {
				if m.Type == labels.MatchEqual && m.Name != query.MetricNameLabel {
					names = append(names, m.Name)
				}
			}
		}
		return closedLabels(v, names...)
	case "vector", "time", "scalar", "pi", "day_of_month", "day_of_week", "day_of_year", "days_in_month", "hour", "minute", "month", "year":
		if len(v.Args) == 0 || v.Func.Name == "vector" || v.Func.Name == "scalar" {
			return closedLabels(v)
		}
	case "label_replace", "label_join":
		if len(v.Args) >= 2 {
			if s, ok := query.Unparen(v.Args[1]).(*parser.StringLiteral); ok {
				return labelFlow(v.Args[0]).add(s.Val)
			}
		}
		return openLabels()
	case "histogram_quantile":
		if len(v.Args) == 2 {
			return labelFlow(v.Args[1]).drop(v, "le")
		}
	case "info":
		return openLabels()
	}
	for _, a := range v.Args {
		if a.Type() == parser.ValueTypeVector || a.Type() == parser.ValueTypeMatrix {
			return labelFlow(a)
		}
	}
	return closedLabels(v)
}

func selectorsOf(args parser.Expressions) []*parser.VectorSelector {
	var out []*parser.VectorSelector
	for _, a := range args {
		switch s := query.Unparen(a).(type) {
		case *parser.VectorSelector:
			out = append(out, s)
		case *parser.MatrixSelector:
			if vs, ok := s.VectorSelector.(*parser.VectorSelector); ok {
				out = append(out, vs)
			}
		}
	}
	return out
}

func binaryFlow(v *parser.BinaryExpr) resultLabels {
	lt, rt := v.LHS.Type(), v.RHS.Type()
	switch {
	case lt != parser.ValueTypeVector && rt != parser.ValueTypeVector:
		return closedLabels(v)
	case lt != parser.ValueTypeVector:
		return filteredFlow(v.RHS, comparesWith(v, v.LHS, true))
	case rt != parser.ValueTypeVector:
		return filteredFlow(v.LHS, comparesWith(v, v.RHS, false))
	}
	switch v.Op {
	case parser.LAND, parser.LUNLESS:
		return labelFlow(v.LHS)
	case parser.LOR:
		return either(labelFlow(v.LHS), labelFlow(v.RHS))
	}
	m := v.VectorMatching
	if m == nil {
		return labelFlow(v.LHS)
	}
	many, one := v.LHS, v.RHS
	if m.Card == parser.CardOneToMany {
		many, one = v.RHS, v.LHS
	}
	out := labelFlow(many)
	if m.Card == parser.CardOneToOne {
		if m.On {
			out = out.keep(v, m.MatchingLabels)
		} else if len(m.MatchingLabels) > 0 {
			out = out.drop(v, m.MatchingLabels...)
		}
	}
	if len(m.Include) > 0 {
		// group_left(x) copies x from the one side, and deletes it when
		// the one side has none.
		from := labelFlow(one)
		for _, n := range m.Include {
			if ok, _ := from.carries(n); ok {
				out = out.add(n)
			} else {
				out = out.drop(v, n)
			}
		}
	}
	return out
}

// describe names the node that drops labels, briefly, for a message.
func describe(q *Query, n parser.Node) string {
	if n == nil {
		return "the query"
	}
	text := n.String()
	switch v := n.(type) {
	case *parser.AggregateExpr:
		how := "by"
		if v.Without {
			how = "without"
		}
		text = v.Op.String()
		if v.Without || len(v.Grouping) > 0 {
			text = fmt.Sprintf("%s %s (%s)", v.Op, how, strings.Join(v.Grouping, ", "))
		}
	case *parser.Call:
		text = v.Func.Name + "()"
	case *parser.BinaryExpr:
		if m := v.VectorMatching; m != nil {
			how := "ignoring"
			if m.On {
				how = "on"
			}
			text = fmt.Sprintf("%s %s (%s)", v.Op, how, strings.Join(m.MatchingLabels, ", "))
		}
	}
	line, col := q.Pos(int(n.PositionRange().Start))
	return fmt.Sprintf("%s at %d:%d", text, line, col)
}

// comparesWith returns what a filtering comparison against a number keeps
// (nil when v is not one): numberFirst says the number is on the left.
func comparesWith(v *parser.BinaryExpr, number parser.Expr, numberFirst bool) func(float64) bool {
	n, ok := query.Unparen(number).(*parser.NumberLiteral)
	if !ok || v.ReturnBool || !v.Op.IsComparisonOperator() {
		return nil
	}
	return func(x float64) bool {
		a, b := x, n.Val
		if numberFirst {
			a, b = b, a
		}
		switch v.Op {
		case parser.EQLC:
			return a == b
		case parser.NEQ:
			return a != b
		case parser.GTR:
			return a > b
		case parser.LSS:
			return a < b
		case parser.GTE:
			return a >= b
		case parser.LTE:
			return a <= b
		}
		return true
	}
}

// filteredFlow is the labels of e's series that a comparison keeps: a
// branch of "or" whose value is a constant the comparison drops (the
// "or 0 * absent(x)" that keeps a rule's result from vanishing) never
// reaches the alert, so its missing labels do not matter.
func filteredFlow(e parser.Expr, keeps func(float64) bool) resultLabels {
	b, ok := query.Unparen(e).(*parser.BinaryExpr)
	if keeps == nil || !ok || b.Op != parser.LOR {
		return labelFlow(e)
	}
	if c, ok := constValue(b.RHS); ok && !keeps(c) {
		return filteredFlow(b.LHS, keeps)
	}
	if c, ok := constValue(b.LHS); ok && !keeps(c) {
		return filteredFlow(b.RHS, keeps)
	}
	return either(filteredFlow(b.LHS, keeps), filteredFlow(b.RHS, keeps))
}

// constValue is the value every series of e has, when it is known: a
// number, absent()'s 1, vector(n), and arithmetic of those.
func constValue(e parser.Expr) (float64, bool) {
	return arithmetic(e, func(e parser.Expr) (float64, bool) {
		if c, ok := e.(*parser.Call); ok {
			switch {
			case c.Func.Name == "absent" || c.Func.Name == "absent_over_time":
				return 1, true
			case c.Func.Name == "vector" && len(c.Args) == 1:
				return constValue(c.Args[0])
			}
		}
		return 0, false
	})
}
