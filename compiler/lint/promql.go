package lint

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/spec/engine"
)

// metricName is the name a selector selects, or "" (also when a Grafana
// variable stands in it).
func metricName(vs *parser.VectorSelector) string {
	name := engine.SelectedName(vs)
	if strings.Contains(name, variableMark) {
		return ""
	}
	return name
}

// matcher returns the selector's matcher on a label.
func matcher(vs *parser.VectorSelector, name string) *labels.Matcher {
	for _, m := range vs.LabelMatchers {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// walk visits every node with the path of its ancestors, outermost first.
func walk(e parser.Expr, fn func(n parser.Node, path []parser.Node)) {
	parser.Inspect(e, func(n parser.Node, path []parser.Node) error {
		fn(n, path)
		return nil
	})
}

// constant evaluates an expression made of numbers only.
func constant(e parser.Expr) (float64, bool) { return arithmetic(e, nil) }

// arithmetic evaluates numbers and the arithmetic between them; leaf, when
// given, values what else may stand in it.
func arithmetic(e parser.Expr, leaf func(parser.Expr) (float64, bool)) (float64, bool) {
	switch v := query.Unparen(e).(type) {
	case *parser.NumberLiteral:
		return v.Val, true
	case *parser.UnaryExpr:
		x, ok := arithmetic(v.Expr, leaf)
		if v.Op == parser.SUB {
			x = -x
		}
		return x, ok
	case *parser.BinaryExpr:
		a, ok1 := arithmetic(v.LHS, leaf)
		b, ok2 := arithmetic(v.RHS, leaf)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch v.Op {
		case parser.ADD:
			return a + b, true
		case parser.SUB:
			return a - b, true
		case parser.MUL:
			return a * b, true
		case parser.DIV:
			return a / b, true
		}
	default:
		if leaf != nil {
			return leaf(v)
		}
	}
	return 0, false
}

// windowSuffix reads the window of a recording rule named the sloth or
// pyrra way (…:ratio_rate5m, …_rate1h).
var windowSuffix = regexp.MustCompile(`rate(\d+[smhdwy])$`)

// window is a time window an expression reads, and where.
type window struct {
	d    time.Duration
	node parser.Node
}

// windows lists the time windows an expression reads: its range
// selectors, `window` label matchers and windows in recording rule names.
func windows(e parser.Expr) []window {
	var out []window
	walk(e, func(n parser.Node, _ []parser.Node) {
		switch v := n.(type) {
		case *parser.MatrixSelector:
			out = append(out, window{v.Range, v})
		case *parser.VectorSelector:
			if m := matcher(v, "window"); m != nil && m.Type == labels.MatchEqual {
				if d, err := model.ParseDuration(m.Value); err == nil {
					out = append(out, window{time.Duration(d), v})
					return
				}
			}
			if m := windowSuffix.FindStringSubmatch(metricName(v)); m != nil {
				if d, err := model.ParseDuration(m[1]); err == nil {
					out = append(out, window{time.Duration(d), v})
				}
			}
		}
	})
	return out
}

func longest(ws []window) time.Duration {
	var m time.Duration
	for _, w := range ws {
		if w.d > m {
			m = w.d
		}
	}
	return m
}

func formatDuration(d time.Duration) string { return model.Duration(d).String() }

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

// leMatchers calls fn for every le="…" equality matcher whose value is a
// number.
func leMatchers(e parser.Expr, fn func(vs *parser.VectorSelector, m *labels.Matcher, v float64)) {
	for _, vs := range query.Selectors(e) {
		m := matcher(vs, "le")
		if m == nil || m.Type != labels.MatchEqual {
			continue
		}
		if v, err := strconv.ParseFloat(m.Value, 64); err == nil && !math.IsNaN(v) {
			fn(vs, m, v)
		}
	}
}
