package query

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// NewParser returns the PromQL parser every expression goes through:
// Prometheus' defaults, as rule files and promtool parse them.
func NewParser() parser.Parser { return parser.NewParser(parser.Options{}) }

// RateOf turns a query over counters into per-second rates over window and
// sums the result to one series. rate() goes on every selector, inside any
// aggregation, so `sum(x{a="b"})` becomes `sum(rate(x{a="b"}[5m]))`: summing
// then rating would break on counter resets of single series.
func RateOf(query string, window time.Duration) (string, error) {
	return RateBy(query, window, nil)
}

// RateBy is RateOf keeping the given labels: one series per value set.
func RateBy(query string, window time.Duration, by []string) (string, error) {
	expr, err := NewParser().ParseExpr(query)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", query, err)
	}
	rated, err := rateSelectors(expr, window)
	if err != nil {
		return "", fmt.Errorf("query %q: %w", query, err)
	}
	return sumOf(rated, by).String(), nil
}

// CheckRate says why RateOf would refuse query, parsed as expr (which it
// does not change), or nil: the check without a second parse.
func CheckRate(query string, expr parser.Expr) error {
	if _, err := rateSelectors(expr, time.Minute); err != nil {
		return fmt.Errorf("query %q: %w", query, err)
	}
	return nil
}

// SumBy sums a query that already yields rates to one series per value set
// of the given labels.
func SumBy(query string, by []string) (string, error) {
	expr, err := NewParser().ParseExpr(query)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", query, err)
	}
	return sumOf(expr, by).String(), nil
}

// AvgBy averages a query that yields ratios, per value set of the labels.
func AvgBy(query string, by []string) (string, error) {
	expr, err := NewParser().ParseExpr(query)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", query, err)
	}
	a := sumOf(expr, by).(*parser.AggregateExpr)
	c := *a
	c.Op = parser.AVG
	return c.String(), nil
}

func rateSelectors(e parser.Expr, window time.Duration) (parser.Expr, error) {
	switch n := e.(type) {
	case *parser.VectorSelector:
		return &parser.Call{
			Func: parser.Functions["rate"],
			Args: parser.Expressions{&parser.MatrixSelector{VectorSelector: n, Range: window}},
		}, nil
	case *parser.AggregateExpr:
		inner, err := rateSelectors(n.Expr, window)
		if err != nil {
			return nil, err
		}
		c := *n
		c.Expr = inner
		return &c, nil
	case *parser.BinaryExpr:
		if count, fraction, ok := CountUnder(n); ok {
			return nativeCount(count, fraction, window)
		}
		if n.Op != parser.ADD && n.Op != parser.SUB {
			return nil, fmt.Errorf("counters may only be added or subtracted before rate() applies, not combined with %s", n.Op)
		}
		lhs, err := rateSelectors(n.LHS, window)
		if err != nil {
			return nil, err
		}
		rhs, err := rateSelectors(n.RHS, window)
		if err != nil {
			return nil, err
		}
		c := *n
		c.LHS, c.RHS = lhs, rhs
		if n.Op == parser.ADD {
			// A counter that has not appeared yet (vLLM creates a
			// rejection reason's series at its first rejection) counts as
			// zero while the other term exists, rather than emptying the
			// sum.
			if !isNumber(lhs) && !isNumber(rhs) {
				return sumTerms(lhs, rhs), nil
			}
		}
		return &c, nil
	case *parser.ParenExpr:
		inner, err := rateSelectors(n.Expr, window)
		if err != nil {
			return nil, err
		}
		return &parser.ParenExpr{Expr: inner}, nil
	case *parser.NumberLiteral:
		return n, nil
	case *parser.MatrixSelector, *parser.SubqueryExpr:
		return nil, fmt.Errorf("a counter query selects instant vectors; drop the range, rate() is applied with the SLO's windows (or set counter: false)")
	case *parser.Call:
		if n.Func.Name == "histogram_count" {
			return rateHistogramArgs(n, window)
		}
		return nil, fmt.Errorf("a counter query cannot call %s(); select the counters, aggregated with sum() if needed, or a native histogram's observations with histogram_count() (or set counter: false)", n.Func.Name)
	default:
		return nil, fmt.Errorf("unsupported expression %q in a counter query", e.String())
	}
}

// TermLabel tells apart the terms of a sum of counters while sumTerms adds
// them.
const TermLabel = "inferslo_term"

func isNumber(e parser.Expr) bool {
	_, ok := e.(*parser.NumberLiteral)
	return ok
}

// sumTerms is a + b where a series either term lacks counts as zero while
// the other has it: each term labelled apart, then summed without the
// label. Each term is read once, where (a or 0 * b) + (b or 0 * a) reads
// each twice; two terms add in the same float operation either way.
func sumTerms(a, b parser.Expr) parser.Expr {
	term := func(e parser.Expr, i string) parser.Expr {
		str := func(v string) parser.Expr { return &parser.StringLiteral{Val: v} }
		return &parser.Call{Func: parser.Functions["label_replace"], Args: parser.Expressions{e, str(TermLabel), str(i), str(""), str("")}}
	}
	return &parser.AggregateExpr{Op: parser.SUM, Without: true, Grouping: []string{TermLabel},
		Expr: &parser.BinaryExpr{Op: parser.LOR, LHS: term(a, "0"), RHS: term(b, "1"), VectorMatching: &parser.VectorMatching{Card: parser.CardManyToMany}}}
}

// CountUnder recognises histogram_count(h) * histogram_fraction(a, b, h)
// (either order, the same h): the count of h's observations between a and
// b, which grows like a counter.
func CountUnder(n *parser.BinaryExpr) (count, fraction *parser.Call, ok bool) {
	if n.Op != parser.MUL || n.ReturnBool || n.VectorMatching != nil && (len(n.VectorMatching.MatchingLabels) > 0 || n.VectorMatching.On) {
		return nil, nil, false
	}
	l, lok := n.LHS.(*parser.Call)
	r, rok := n.RHS.(*parser.Call)
	if !lok || !rok {
		return nil, nil, false
	}
	if l.Func.Name == "histogram_fraction" {
		l, r = r, l
	}
	if l.Func.Name != "histogram_count" || r.Func.Name != "histogram_fraction" || len(l.Args) != 1 || len(r.Args) != 3 {
		return nil, nil, false
	}
	if l.Args[0].String() != r.Args[2].String() {
		return nil, nil, false
	}
	return l, r, true
}

// nativeCount rates the histogram of histogram_count(h) *
// histogram_fraction(a, b, h) per series. A series without observations in
// the window has a NaN fraction; it holds no events, so the comparison
// drops it rather than let NaN poison the sum (and every window built on
// it). Summing per-series counts, rather than histograms first, keeps each
// series at its own schema: Prometheus adds histograms at the coarsest one.
func nativeCount(count, fraction *parser.Call, window time.Duration) (parser.Expr, error) {
	c, err := rateHistogramArgs(count, window)
	if err != nil {
		return nil, err
	}
	f, err := rateHistogramArgs(fraction, window)
	if err != nil {
		return nil, err
	}
	product := &parser.BinaryExpr{Op: parser.MUL, LHS: c, RHS: f, VectorMatching: &parser.VectorMatching{Card: parser.CardOneToOne}}
	guard := &parser.BinaryExpr{Op: parser.GTE, LHS: product, RHS: &parser.NumberLiteral{Val: 0}, VectorMatching: nil}
	return &parser.ParenExpr{Expr: guard}, nil
}

// rateHistogramArgs rates the native histogram a histogram function reads;
// its bounds must be numbers.
func rateHistogramArgs(n *parser.Call, window time.Duration) (parser.Expr, error) {
	args := make(parser.Expressions, len(n.Args))
	for i, a := range n.Args {
		switch x := a.(type) {
		case *parser.NumberLiteral:
			args[i] = x
		case *parser.VectorSelector:
			args[i] = &parser.Call{
				Func: parser.Functions["rate"],
				Args: parser.Expressions{&parser.MatrixSelector{VectorSelector: x, Range: window}},
			}
		default:
			return nil, fmt.Errorf("%s() in a counter query reads one native histogram selector and number bounds, not %q", n.Func.Name, a.String())
		}
	}
	c := *n
	c.Args = args
	return &c, nil
}

// sumOf wraps e in sum by (by) unless it already is a sum to one series,
// which then sums by (by) itself: a query's plain sum() would otherwise drop
// the grouping labels before the outer sum could keep them.
func sumOf(e parser.Expr, by []string) parser.Expr {
	if a, ok := e.(*parser.AggregateExpr); ok && a.Op == parser.SUM && len(a.Grouping) == 0 && !a.Without {
		c := *a
		c.Grouping = by
		return &c
	}
	if p, ok := e.(*parser.ParenExpr); ok {
		e = p.Expr
	}
	if len(by) > 0 {
		// Sums inside (sum(a) + sum(b)) would drop the labels first.
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			if a, ok := n.(*parser.AggregateExpr); ok && a.Op == parser.SUM && len(a.Grouping) == 0 && !a.Without {
				a.Grouping = by
			}
			return nil
		})
	}
	return &parser.AggregateExpr{Op: parser.SUM, Expr: e, Grouping: by}
}

// SeriesSelector prints a selector of metric name narrowed by matchers text
// (`a="b",c=~"d"`, may be empty); a UTF-8 name that is not a legacy
// Prometheus name goes quoted inside the braces.
func SeriesSelector(name, matchers string) string {
	if ValidMetricName(name) {
		if matchers == "" {
			return name
		}
		return name + "{" + matchers + "}"
	}
	if matchers == "" {
		return fmt.Sprintf("{%q}", name)
	}
	return fmt.Sprintf("{%q,%s}", name, matchers)
}

// Scoped adds matchers text to every selector of query (a matcher on a
// label the selector already matches narrows it further). A bare metric name
// keeps the matchers' order as written; anything else is printed
// canonically by the parser.
func Scoped(query, matchers string) (string, error) {
	if ValidMetricName(query) {
		return SeriesSelector(query, matchers), nil
	}
	expr, err := NewParser().ParseExpr(query)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", query, err)
	}
	if strings.TrimSpace(matchers) == "" {
		return expr.String(), nil
	}
	ms, err := NewParser().ParseMetricSelector("{" + matchers + "}")
	if err != nil {
		return "", fmt.Errorf("selector %q: %w", matchers, err)
	}
	for _, vs := range Selectors(expr) {
		vs.LabelMatchers = append(vs.LabelMatchers, ms...)
	}
	return expr.String(), nil
}

// BucketSelectors lists, once each and in order, the selectors of expr that
// match le exactly: the histogram buckets a good-events query reads. It is
// empty when expr does not parse.
func BucketSelectors(expr string) []string {
	e, err := NewParser().ParseExpr(expr)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, vs := range Selectors(e) {
		for _, m := range vs.LabelMatchers {
			if m.Name == "le" && m.Type == labels.MatchEqual {
				if s := vs.String(); !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
				break
			}
		}
	}
	return out
}

// BucketBound is the le a bucket selector (from BucketSelectors) selects.
func BucketBound(sel string) string {
	ms, err := NewParser().ParseMetricSelector(sel)
	if err != nil {
		return ""
	}
	for _, m := range ms {
		if m.Name == "le" && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// Excluding narrows query so it no longer counts the series other selects.
// Other is one selector: of a metric query reads, told apart by one
// equality matcher (tgi_request_failure{err="overloaded"}), and each of
// query's selectors of that metric gets the matcher negated; or a whole
// metric (vllm:admission_rejections_total), and the terms of query's sum
// that read only it are dropped. It reports false, with query unchanged,
// when other is neither, or query reads no series of its metric apart.
func Excluding(query, other string) (string, bool) {
	ms, err := NewParser().ParseMetricSelector(other)
	if err != nil {
		return query, false
	}
	var name string
	var by *labels.Matcher
	for _, m := range ms {
		switch {
		case m.Name == MetricNameLabel && m.Type == labels.MatchEqual:
			name = m.Value
		case m.Type == labels.MatchEqual && by == nil:
			by = m
		default:
			return query, false
		}
	}
	if name == "" {
		return query, false
	}
	expr, err := NewParser().ParseExpr(query)
	if err != nil {
		return query, false
	}
	if by == nil {
		return withoutTerms(expr, name)
	}
	found := false
	for _, vs := range Selectors(expr) {
		if vs.Name != name {
			continue
		}
		found = true
		vs.LabelMatchers = append(vs.LabelMatchers, labels.MustNewMatcher(labels.MatchNotEqual, by.Name, by.Value))
	}
	if !found {
		return query, false
	}
	return expr.String(), true
}

// withoutTerms drops from a sum the terms that read only metric name; it
// reports false, with expr's text unchanged, when no term or every term
// does.
func withoutTerms(expr parser.Expr, name string) (string, bool) {
	var terms func(e parser.Expr) []parser.Expr
	terms = func(e parser.Expr) []parser.Expr {
		if b, ok := e.(*parser.BinaryExpr); ok && b.Op == parser.ADD && !b.ReturnBool {
			return append(terms(b.LHS), terms(b.RHS)...)
		}
		return []parser.Expr{e}
	}
	var kept []string
	all := terms(expr)
	for _, t := range all {
		only := true
		for _, vs := range Selectors(t) {
			only = only && vs.Name == name
		}
		if !only || len(Selectors(t)) == 0 {
			kept = append(kept, t.String())
		}
	}
	if len(kept) == len(all) || len(kept) == 0 {
		return expr.String(), false
	}
	return strings.Join(kept, " + "), true
}
