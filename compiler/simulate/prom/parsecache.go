package prom

import (
	"fmt"
	"sync"

	"github.com/prometheus/prometheus/promql/parser"
)

// cachedParser is the engine's parser for one harness: the rules manager
// hands the engine each rule's query as text at every evaluation, and
// parsing it again every simulated minute took a sixth of a replay's CPU.
// The engine writes into the tree it is given (step-invariant wrappers,
// @ start()/end() times, the series a selector selects), so each query
// gets a fresh copy of the tree parsed once, never the cached one.
type cachedParser struct {
	parser.Parser
	mu     sync.Mutex
	parsed map[string]parser.Expr
}

func newCachedParser(p parser.Parser) *cachedParser {
	return &cachedParser{Parser: p, parsed: map[string]parser.Expr{}}
}

func (c *cachedParser) ParseExpr(q string) (parser.Expr, error) {
	c.mu.Lock()
	e, ok := c.parsed[q]
	c.mu.Unlock()
	if !ok {
		var err error
		if e, err = c.Parser.ParseExpr(q); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.parsed[q] = e
		c.mu.Unlock()
	}
	if x, err := cloneExpr(e); err == nil {
		return x, nil
	}
	// A node type the copy does not know: parsing afresh is always right.
	return c.Parser.ParseExpr(q)
}

// cloneExpr copies every node of a parsed tree the engine may write into;
// label matchers, functions and duration expressions, which it only
// reads, are shared.
func cloneExpr(e parser.Expr) (parser.Expr, error) {
	if e == nil {
		return nil, nil
	}
	var err error
	switch n := e.(type) {
	case *parser.AggregateExpr:
		c := *n
		if c.Expr, err = cloneExpr(n.Expr); err == nil {
			c.Param, err = cloneExpr(n.Param)
		}
		return &c, err
	case *parser.BinaryExpr:
		c := *n
		if n.VectorMatching != nil {
			vm := *n.VectorMatching
			c.VectorMatching = &vm
		}
		if c.LHS, err = cloneExpr(n.LHS); err == nil {
			c.RHS, err = cloneExpr(n.RHS)
		}
		return &c, err
	case *parser.Call:
		c := *n
		c.Args = make(parser.Expressions, len(n.Args))
		for i, a := range n.Args {
			if c.Args[i], err = cloneExpr(a); err != nil {
				return nil, err
			}
		}
		return &c, nil
	case *parser.MatrixSelector:
		c := *n
		c.VectorSelector, err = cloneExpr(n.VectorSelector)
		return &c, err
	case *parser.SubqueryExpr:
		c := *n
		c.Expr, err = cloneExpr(n.Expr)
		return &c, err
	case *parser.ParenExpr:
		c := *n
		c.Expr, err = cloneExpr(n.Expr)
		return &c, err
	case *parser.UnaryExpr:
		c := *n
		c.Expr, err = cloneExpr(n.Expr)
		return &c, err
	case *parser.StepInvariantExpr:
		c := *n
		c.Expr, err = cloneExpr(n.Expr)
		return &c, err
	case *parser.VectorSelector:
		c := *n
		c.UnexpandedSeriesSet, c.Series = nil, nil
		return &c, nil
	case *parser.NumberLiteral:
		c := *n
		return &c, nil
	case *parser.StringLiteral:
		c := *n
		return &c, nil
	case *parser.DurationExpr:
		c := *n
		return &c, nil
	}
	return nil, fmt.Errorf("copy a parsed query: unknown node %T", e)
}
