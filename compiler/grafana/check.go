package grafana

import (
	"fmt"
	"strings"

	pq "github.com/inferslo/inferslo/compiler/query"
)

// queries checks panel queries. One serves every dashboard a Builder
// makes and parses each query shape once: every service's panels repeat
// the same queries with other label values.
type queries struct {
	exprs *pq.ShapeParser
	// macros stand in for Grafana's interval macros so a query can be
	// parsed as PromQL; any valid duration proves the same syntax.
	macros *strings.Replacer
}

func newQueries() *queries {
	return &queries{
		exprs:  pq.NewShapeParser(),
		macros: strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h"),
	}
}

// parses checks that a panel query is PromQL once Grafana's macros are
// expanded. Template variables may only appear inside label values, where
// they are plain text to the parser.
func (q *queries) parses(expr string) error {
	expanded := expr
	// Every macro starts so; the replacer tests every byte.
	if strings.Contains(expr, "$__") {
		expanded = q.macros.Replace(expr)
	}
	if _, err := q.exprs.ParseExpr(expanded); err != nil {
		return fmt.Errorf("query %q does not parse: %w", expr, err)
	}
	return nil
}

// check is the in-memory validation of a dashboard: every query parses,
// panel ids are unique, and panels sit inside the grid without overlapping.
func (q *queries) check(d dashboard) error {
	if d.UID == "" || len(d.UID) > maxUID {
		return fmt.Errorf("uid %q must have 1 to %d characters", d.UID, maxUID)
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			if err := q.parses(a.Expr); err != nil {
				return fmt.Errorf("annotation %q: %w", a.Name, err)
			}
		}
	}
	ids := map[int]bool{}
	var placed []gridPos
	for _, item := range d.Panels {
		var id int
		var title string
		var pos gridPos
		switch p := item.(type) {
		case row:
			id, title, pos = p.ID, p.Title, p.GridPos
		case panel:
			id, title, pos = p.ID, p.Title, p.GridPos
			if p.Description == "" {
				return fmt.Errorf("panel %q has no description", title)
			}
			for _, t := range p.Targets {
				if err := q.parses(t.Expr); err != nil {
					return fmt.Errorf("panel %q target %s: %w", title, t.RefID, err)
				}
			}
		default:
			return fmt.Errorf("unexpected panel type %T", item)
		}
		if title == "" {
			return fmt.Errorf("panel %d has no title", id)
		}
		if ids[id] {
			return fmt.Errorf("panel id %d is used twice", id)
		}
		ids[id] = true
		if pos.W < 1 || pos.H < 1 || pos.X < 0 || pos.Y < 0 || pos.X+pos.W > gridWidth {
			return fmt.Errorf("panel %q is outside the grid: %+v", title, pos)
		}
		for _, q := range placed {
			if overlap(pos, q) {
				return fmt.Errorf("panel %q overlaps another panel at %+v", title, q)
			}
		}
		placed = append(placed, pos)
	}
	return nil
}

func overlap(a, b gridPos) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}
