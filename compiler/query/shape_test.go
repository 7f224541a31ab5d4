package query

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// TestARepeatedShapeParsesAsItsFirstInstanceWould parses a first expression,
// then a second through the same Parser, and requires each one's error (or
// its absence) to be the plain parser's, and the second to be served from
// the first's shape only where the masking allows.
func TestARepeatedShapeParsesAsItsFirstInstanceWould(t *testing.T) {
	cases := []struct {
		name          string
		first, second string
		served        bool
	}{
		{"another matcher value shares the shape", `sum(rate(x{slo="a",le="0.25"}[5m]))`, `sum(rate(x{slo="b",le="0.5"}[5m]))`, true},
		{"a negated matcher value shares the shape", `x{a!="b",c="d"}`, `x{a!="z",c="d"}`, true},
		{"an empty value is its own shape, since a selector needs a non-empty matcher", `{a="x"}`, `{a=""}`, false},
		{"a regular expression stays in the shape", `x{a=~"b|c"}`, `x{a=~"(b"}`, false},
		{"a value with an escape stays in the shape", `x{a="b"}`, `x{a="\u00e9"}`, false},
		{"another metric name is another shape", `x{a="b"}`, `y{a="b"}`, false},
		{"another number is another shape", `x{a="b"} > 1`, `x{a="b"} > 2`, false},
		{"a string argument stays in the shape", `label_replace(x, "a", "$1", "b", "(.*)")`, `label_replace(x, "a", "$1", "b", "(")`, false},
		{"a shape that failed is not remembered", `x{a="b"} +`, `x{a="c"} +`, false},
		{"a lexer error is parsed, not shaped", `x{a="b\q"}`, `x{a="c\q"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewShapeParser()
			_, firstErr := p.ParseExpr(c.first)
			_, wantFirst := parser.NewParser(parser.Options{}).ParseExpr(c.first)
			if (firstErr == nil) != (wantFirst == nil) {
				t.Fatalf("first: err = %v, plain parser: %v", firstErr, wantFirst)
			}
			k, ok := Shape(c.second)
			_, served := p.parsed[k]
			if served = served && ok; served != c.served {
				t.Errorf("served from the first shape = %v, want %v", served, c.served)
			}
			_, err := p.ParseExpr(c.second)
			_, want := parser.NewParser(parser.Options{}).ParseExpr(c.second)
			if (err == nil) != (want == nil) {
				t.Fatalf("second: err = %v, plain parser: %v", err, want)
			}
		})
	}
}

// TestRememberedShapesAreTheLexersShapes shapes expressions through one
// Shapes in turn, each after siblings that mask alike or nearly so, and
// requires every answer to be the lexer's.
func TestRememberedShapesAreTheLexersShapes(t *testing.T) {
	exprs := []string{
		`sum(rate(x{slo="a",le="0.25"}[5m]))`,
		`sum(rate(x{slo="b",le="0.5"}[5m]))`,
		`sum(rate(x{slo = "c",le= "1"}[5m]))`,
		"x{a=\t\"b\"}", "x{a=\r\n \"c\"}", "x{a \n!=\n\"d\"}",
		`x{a!="b",c="d"}`, `x{a!="z",c="d"}`, `x{a!="",c="d"}`,
		`{a="x"}`, `{a=""}`,
		`x{a=~"b|c"}`, `x{a=~"(b"}`, `x{a!~"b"}`,
		`x{a="b"}`, `x{a="\u00e9"}`, `x{a='b'}`, "x{a=`b`}",
		`x{a="b"} == 1`, `x == "b"`, `x == "c"`, `x >= "b"`, `x >= "c"`, `x <= "c"`, `x != "b"`,
		`label_replace(x, "a", "$1", "b", "(.*)")`, `label_replace(x, "a", "$1", "b", "(")`,
		`x{a="b"} +`, `x{a="c"} +`,
		`x{a="b"} # a="c"`, `x{a="b` + "\n" + `"}`, `x{a="c` + "\n" + `"}`,
		`x{a="b"`, `x{a="c"`, `x{a="` + "\xff" + `"}`, `x{a="` + "\xfe" + `"}`,
		`x{a! ="b"}`, `x{a! ="c"}`,
	}
	var s Shapes
	for round := 0; round < 2; round++ {
		for _, q := range exprs {
			key, ok := s.Shape(q)
			wantKey, wantOK := Shape(q)
			if key != wantKey || ok != wantOK {
				t.Errorf("%q: remembered shape %q, %v; the lexer's %q, %v", q, key, ok, wantKey, wantOK)
			}
		}
	}
}
