package prom

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"

	"github.com/inferslo/inferslo/compiler/query"
)

func TestACachedParseGivesEachQueryATreeOfItsOwnEqualToAFreshParse(t *testing.T) {
	queries := []string{
		`sum without (tile) (label_replace(x{slo="a",window="1h"}, "tile", "0", "", "") or label_replace(x{slo="a",window="1h"} offset 1h, "tile", "1", "", ""))`,
		`max without (window) (r{window="5m"} / 0.001 > 14.4 and on (slo) r{window="1h"} / 0.001 > 14.4)`,
		`sum(rate(h_bucket{le="0.5"}[5m])) / ignoring (le) group_left sum(rate(h_count[5m]))`,
		`-avg_over_time(x[4w:1h] @ end()) unless (vector(1) > bool 0)`,
		`histogram_fraction(0, 0.5, sum(rate(h[5m])))`,
	}
	c := newCachedParser(query.NewParser())
	for _, q := range queries {
		fresh, err := query.NewParser().ParseExpr(q)
		if err != nil {
			t.Fatal(err)
		}
		first, err := c.ParseExpr(q)
		if err != nil {
			t.Fatal(err)
		}
		// The engine rewrites the tree it runs; the next query of the same
		// text must not see that.
		if _, err := promql.PreprocessExpr(first, Epoch(), Epoch(), 0); err != nil {
			t.Fatal(err)
		}
		second, err := c.ParseExpr(q)
		if err != nil {
			t.Fatal(err)
		}
		if first == second {
			t.Errorf("%s: two queries got the same tree", q)
		}
		if second.String() != fresh.String() {
			t.Errorf("cached parse of %s is %s, want %s", q, second, fresh)
		}
	}
}

// Evaluating the same rule text twice through the harness' engine gives
// the same answer as a fresh engine: the second query does not read the
// first one's series.
func TestAQueryRunTwiceThroughTheCacheAnswersAsAFreshParse(t *testing.T) {
	h, err := NewIndexedHarness(nil, false, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	app := h.DB.Appender(t.Context())
	for i := range 20 {
		at := Epoch().Add(time.Duration(i) * 30 * time.Second).UnixMilli()
		if _, err := app.Append(0, labels.FromStrings("__name__", "x", "k", "a"), at, float64(10*i)); err != nil {
			t.Fatal(err)
		}
		if i >= 10 {
			if _, err := app.Append(0, labels.FromStrings("__name__", "x", "k", "b"), at, float64(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	const q = `sum by (k) (rate(x[5m]))`
	for _, at := range []time.Duration{4 * time.Minute, 9 * time.Minute, 4 * time.Minute} {
		got, err := h.Query(q, at)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := runQuery(promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: time.Minute, Parser: query.NewParser()}).
			NewInstantQuery(t.Context(), h.DB, nil, q, Epoch().Add(at)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.Vector()
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("at %s: %s through the cache, %s freshly parsed", at, got, want)
		}
	}
}
