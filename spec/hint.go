package spec

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/inferslo/inferslo/compiler/query"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
)

// didYouMean suggests the known word closest to a misspelt one, as
// ` (did you mean "target"?)`, or "" when none is close.
func didYouMean(word string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		d := query.EditDistance(strings.ToLower(word), strings.ToLower(k))
		if d == 0 {
			continue
		}
		if best == "" || d < bestDist || d == bestDist && k < best {
			best, bestDist = k, d
		}
	}
	// Two edits, or fewer for short words, catch typos without suggesting
	// unrelated fields.
	if best == "" || bestDist > 2 || bestDist*3 > len(word) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// fieldNames lists every field name (by struct tag) reachable from t, the
// vocabulary hints are drawn from.
func fieldNames(t reflect.Type, tag string) []string {
	seen := map[string]bool{}
	visited := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || visited[t] {
			return
		}
		visited[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get(tag), ",")[0]
			if name != "" && name != "-" {
				seen[name] = true
			}
			walk(f.Type)
		}
	}
	walk(t)
	return slices.Sorted(maps.Keys(seen))
}

// openSLOFields is the vocabulary of OpenSLO v1 objects.
func openSLOFields() []string {
	var names []string
	for _, v := range []any{v1.SLO{}, v1.SLI{}, v1.Service{}, v1.DataSource{}, v1.AlertPolicy{}, v1.AlertCondition{}, v1.AlertNotificationTarget{}} {
		names = append(names, fieldNames(reflect.TypeOf(v), "json")...)
	}
	return names
}
