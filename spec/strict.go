package spec

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// structKeys caches, per struct type, the keys yaml.v3 decodes into it.
type structKeys map[reflect.Type]map[string]reflect.Type

// unknownKey is a mapping key that names no field of the struct it decodes
// into.
type unknownKey struct {
	key   *yaml.Node
	path  string
	known []string
}

// unknownKeys walks a node beside the type it decodes into and returns
// every mapping key yaml.v3's KnownFields would refuse, with its property
// path. It lets a document be decoded straight from its node (yaml.v3 has
// no strict mode for Node.Decode) instead of being re-encoded for a strict
// decoder, which cost a third of `validate`.
func (fields structKeys) unknownKeys(n *yaml.Node, t reflect.Type) []unknownKey {
	var out []unknownKey
	var walk func(n *yaml.Node, t reflect.Type, path string)
	walk = func(n *yaml.Node, t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, t, path)
			}
		case yaml.AliasNode:
			if n.Alias != nil {
				walk(n.Alias, t, path)
			}
		case yaml.SequenceNode:
			if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
				for i, c := range n.Content {
					walk(c, t.Elem(), path+"["+strconv.Itoa(i)+"]")
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := joinPath(path, k.Value)
				switch t.Kind() {
				case reflect.Map:
					walk(v, t.Elem(), p)
				case reflect.Struct:
					if k.Tag == "!!merge" {
						walk(v, t, path)
						continue
					}
					fs, ok := fields[t]
					if !ok {
						fs = structFields(t)
						fields[t] = fs
					}
					ft, ok := fs[k.Value]
					if !ok {
						out = append(out, unknownKey{key: k, path: p, known: slices.Sorted(maps.Keys(fs))})
						continue
					}
					walk(v, ft, p)
				}
			}
		}
	}
	walk(n, t, "")
	return out
}

// structFields maps the keys yaml.v3 decodes into a struct (its tag name,
// or the lower-cased field name) to their types, through inlined structs.
func structFields(t reflect.Type) map[string]reflect.Type {
	fs := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				maps.Copy(fs, structFields(ft))
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fs[name] = f.Type
	}
	return fs
}
