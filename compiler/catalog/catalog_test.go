package catalog

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferslo/inferslo/compiler/internal/slotest"
	"github.com/inferslo/inferslo/compiler/kube/crdschema"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/spec"
)

// TestCatalogQueriesReadSeriesTheRulesRecord: every series a catalog query
// reads is recorded by the generated rules with the labels it selects, so
// a portal reading the catalog finds data.
func TestCatalogQueriesReadSeriesTheRulesRecord(t *testing.T) {
	set := slotest.Examples(t).Set
	for _, dir := range []string{"calendar", "timeslices"} {
		res, err := spec.Load(filepath.Join("..", "..", "testdata", dir))
		if err != nil || res.Err() != nil {
			t.Fatalf("%s: %v %v", dir, err, res.Err())
		}
		set.SLOs = append(set.SLOs, res.Set.SLOs...)
	}
	files, err := Build(set)
	if err != nil {
		t.Fatal(err)
	}
	var c Catalog
	if err := json.Unmarshal(files[0].Data, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.SLOs) != len(set.SLOs) {
		t.Fatalf("%d entries for %d SLOs", len(c.SLOs), len(set.SLOs))
	}
	services, err := rules.Services(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Recorded series by name, as the label sets the rules write.
	recorded := map[string][]labels.Labels{}
	for _, svc := range services {
		for _, g := range svc.Groups {
			for _, r := range g.Rules {
				if r.Record != "" {
					recorded[r.Record] = append(recorded[r.Record], labels.FromMap(r.Labels))
				}
			}
		}
	}
	p := query.NewParser()
	for _, e := range c.SLOs {
		for what, q := range map[string]string{"budgetRemaining": e.Queries.BudgetRemaining, "errorRatio": e.Queries.ErrorRatio, "burnRate": e.Queries.BurnRate} {
			expr, err := p.ParseExpr(q)
			if err != nil {
				t.Fatalf("%s %s: %v", e.Name, what, err)
			}
			for _, vs := range query.Selectors(expr) {
				if !anyMatches(recorded[vs.Name], vs.LabelMatchers) {
					t.Errorf("%s: %s reads %s, which no rule records", e.Name, what, vs)
				}
			}
		}
	}
}

func anyMatches(sets []labels.Labels, ms []*labels.Matcher) bool {
	for _, ls := range sets {
		ok := true
		for _, m := range ms {
			if m.Name != query.MetricNameLabel && !m.Matches(ls.Get(m.Name)) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestCatalogFollowsItsSchema holds the examples' catalog to the schema
// docs/schemas/catalog.schema.json publishes.
func TestCatalogFollowsItsSchema(t *testing.T) {
	c, err := crdschema.Load(filepath.Join("..", "..", "docs", "schemas", "catalog.schema.json"), "mem://")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://catalog.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Build(slotest.Examples(t).Set)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(files[0].Data, &doc); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(doc); err != nil {
		t.Fatal(err)
	}
	// The schema must be able to refuse: an entry without its queries.
	doc.(map[string]any)["slos"].([]any)[0].(map[string]any)["queries"] = map[string]any{}
	if s.Validate(doc) == nil {
		t.Error("an entry without queries passes the schema")
	}
}

func TestAnEmptySetHasNoCatalog(t *testing.T) {
	files, err := Build(model.Set{})
	if err != nil || len(files) != 0 {
		t.Errorf("Build(empty) = %d files, %v; want none", len(files), err)
	}
}
