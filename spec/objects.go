package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/OpenSLO/go-sdk/pkg/openslo"
	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	"github.com/nobl9/govy/pkg/govy"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
)

// object is a decoded OpenSLO object with where it came from. mapPath turns
// the object's property paths into paths of the source document (they differ
// for objects expanded from the shorthand).
type object[T any] struct {
	v       T
	d       *doc
	mapPath func(string) string
	// ext holds an SLO's typed extensions: set by the shorthand, decoded
	// from annotations for plain OpenSLO.
	ext *Extensions
}

func (o object[T]) errorf(path, format string, args ...any) Problem {
	return o.d.errorf(o.mapPath(path), format, args...)
}

func (o object[T]) warnf(path, format string, args ...any) Problem {
	return o.d.warnf(o.mapPath(path), format, args...)
}

func samePath(p string) string { return p }

// loader collects objects of every file by kind and name. References are
// resolved by our own lookups rather than go-sdk's inliner so that a problem
// inside a referenced object points at that object's file and line.
type loader struct {
	cat         *engine.Catalog
	problems    Problems
	slos        []object[v1.SLO]
	sloNames    map[string]*doc // where each SLO name was first defined
	slis        map[string]object[v1.SLI]
	services    map[string]object[v1.Service]
	dataSources map[string]object[v1.DataSource]
	policies    map[string]object[v1.AlertPolicy]
	conditions  map[string]object[v1.AlertCondition]
	targets     map[string]object[v1.AlertNotificationTarget]
	// Objects lists every object in input order, for export.
	objects []openslo.Object
	// refused holds the OpenSLO documents refused, by kind and name, so a
	// reference to one points at its problems, not at a missing object.
	refused map[[2]string]*doc
	// keys are the fields of the shorthand's types, found once.
	keys structKeys
	// checks are the caller's further checks of each resolved SLO.
	checks []Checker
	// signals are the catalog's engines' signals, made once and shared
	// (read, not changed) by their SLOs; filled before SLOs resolve.
	signals map[*engine.Engine]model.Signals
}

func newLoader(cat *engine.Catalog) *loader {
	signals := map[*engine.Engine]model.Signals{}
	if cat != nil {
		for _, e := range cat.Engines {
			signals[e] = signalsOf(e)
		}
	}
	return &loader{
		cat:         cat,
		signals:     signals,
		keys:        structKeys{},
		sloNames:    map[string]*doc{},
		slis:        map[string]object[v1.SLI]{},
		services:    map[string]object[v1.Service]{},
		dataSources: map[string]object[v1.DataSource]{},
		policies:    map[string]object[v1.AlertPolicy]{},
		conditions:  map[string]object[v1.AlertCondition]{},
		targets:     map[string]object[v1.AlertNotificationTarget]{},
		refused:     map[[2]string]*doc{},
	}
}

// noObject says why a reference to name finds no object of kind: the
// document defining it was refused, or no document defines it.
func (l *loader) noObject(kind, plural, name string, known []string) string {
	if d := l.refused[[2]string{kind, name}]; d != nil {
		return fmt.Sprintf("the %s %q at %s is refused for the problems reported there", kind, name, location(d))
	}
	return fmt.Sprintf("no %s named %q in the specs given; known %s: %s", kind, name, plural, fmtList(known))
}

func (l *loader) addFile(file string, data []byte) {
	l.addDocs(splitDocs(file, data))
}

// addDocs adds a file's documents and the problems of its split.
func (l *loader) addDocs(docs []*doc, ps Problems) {
	l.problems = append(l.problems, ps...)
	for _, d := range docs {
		l.addDoc(d)
	}
}

func scalar(d *doc, key string) string {
	if n := child(d.node, key); n != nil {
		return n.Value
	}
	return ""
}

func (l *loader) addDoc(d *doc) {
	apiVersion, kind := scalar(d, "apiVersion"), scalar(d, "kind")
	switch {
	case Foreign(d.node) != "":
		field := "apiVersion"
		if apiVersion == "" {
			field = "version"
		}
		l.problems = append(l.problems, d.errorf(field, "this is a %s, not OpenSLO; convert it with `inferslo import %s`", Foreign(d.node), d.file))
	case apiVersion == ShorthandAPIVersion && kind == ShorthandKind:
		var s Shorthand
		if ps := l.keys.decodeStrict(d, &s); len(ps) > 0 {
			l.problems = append(l.problems, ps...)
			return
		}
		objs, ps := expand(d, &s, l.cat)
		l.problems = append(l.problems, ps...)
		if len(ps.Errors()) > 0 {
			return
		}
		for _, e := range objs {
			l.add(d, e.obj, e.mapPath, e.ext)
		}
	case apiVersion == ShorthandAPIVersion:
		l.problems = append(l.problems, d.errorf("kind", "%q is not a kind of %s; valid: %s", kind, apiVersion, ShorthandKind))
	case apiVersion == string(openslo.VersionV1):
		obj, ps := decodeOpenSLO(d)
		l.problems = append(l.problems, ps...)
		if obj != nil {
			l.add(d, obj, samePath, nil)
		} else if name := scalar(&doc{node: child(d.node, "metadata")}, "name"); name != "" {
			l.refused[[2]string{kind, name}] = d
		}
	case apiVersion == string(openslo.VersionV1alpha) || apiVersion == string(openslo.VersionV2alpha):
		objs, paths, ps := decodeOlder(d)
		l.problems = append(l.problems, ps...)
		for i, obj := range objs {
			l.add(d, obj, paths[i], nil)
		}
	case apiVersion == "":
		l.problems = append(l.problems, d.errorf("apiVersion", "required: openslo/v1 or %s", ShorthandAPIVersion))
	default:
		l.problems = append(l.problems, d.errorf("apiVersion", "unknown apiVersion %q; valid: openslo/v1, %s", apiVersion, ShorthandAPIVersion))
	}
}

var (
	jsonField   = regexp.MustCompile(`unknown field "([^"]+)"`)
	sdkDuration = regexp.MustCompile(`invalid duration shorthand: (.*), expected \[0-9\]\+\[mhdwMQY\]`)
)

func decodeProblem(d *doc, err error) Problem {
	msg := err.Error()
	if m := jsonField.FindStringSubmatch(msg); m != nil {
		path, _ := findKey(d.node, func(k, _ *yaml.Node) bool { return k.Value == m[1] }, "")
		return d.errorf(path, "unknown field %q%s", m[1], didYouMean(m[1], openSLOFields()))
	}
	if m := sdkDuration.FindStringSubmatch(msg); m != nil {
		// The SDK's duration reader names the value, not where it is.
		path, _ := findKey(d.node, func(k, v *yaml.Node) bool {
			return v.Kind == yaml.ScalarNode && v.Value == m[1] && k.Value != "name"
		}, "")
		return d.errorf(path, "%q is not an OpenSLO duration: write a whole number and a unit m, h, d, w, M, Q or Y, such as 28d", m[1])
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path := findLoosePath(d, te.Field)
		return d.errorf(path, "expected %s, got %s", te.Type.String(), te.Value)
	}
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "failed to decode") {
		msg = msg[i+2:]
	}
	if strings.HasPrefix(msg, "unsupported openslo.Kind") {
		return d.errorf("kind", "unknown kind %q; valid: %s", scalar(d, "kind"), fmtList(kindNames()))
	}
	return d.errorf("", "%s", msg)
}

func kindNames() []string {
	var out []string
	for _, k := range v1.GetSupportedKinds() {
		out = append(out, string(k))
	}
	return out
}

// findLoosePath finds a dotted path whose sequence indices are unknown
// (encoding/json reports spec.objectives.target), taking the first match.
func findLoosePath(d *doc, field string) string {
	path := ""
	n := d.node
	for _, seg := range strings.Split(field, ".") {
		for n != nil && n.Kind == 2 /* sequence */ && len(n.Content) > 0 {
			path += "[0]"
			n = n.Content[0]
		}
		next := child(n, seg)
		if next == nil {
			break
		}
		path = joinPath(path, seg)
		n = next
	}
	return path
}

// validationProblems turns go-sdk's govy errors into located problems.
func validationProblems(d *doc, err error, mapPath func(string) string) Problems {
	var ve *govy.ValidatorError
	if !errors.As(err, &ve) {
		return Problems{d.errorf("", "%v", err)}
	}
	var ps Problems
	for _, pe := range ve.Errors {
		path := strings.TrimPrefix(strings.TrimPrefix(pe.PropertyPath.String(), "$"), ".")
		for _, re := range pe.Errors {
			msg := re.Message
			if msg == "length must be between 1 and 1" {
				msg = "OpenSLO v1 takes exactly one entry here"
				if strings.HasSuffix(path, "conditions") {
					msg = "an AlertPolicy holds exactly one condition in OpenSLO v1; give each condition an AlertPolicy of its own"
				}
			}
			ps = append(ps, d.errorf(mapPath(path), "%s", msg))
		}
	}
	return ps
}

// add files a decoded object under its kind and name.
func (l *loader) add(d *doc, obj openslo.Object, mapPath func(string) string, ext *Extensions) {
	if svc, ok := obj.(v1.Service); ok && l.sharedService(d, svc, mapPath) {
		return
	}
	l.objects = append(l.objects, obj)
	dup := func(kind, name string, other *doc) {
		l.problems = append(l.problems, d.errorf(mapPath("metadata.name"), "%s %q is already defined at %s; names must be unique", kind, name, location(other)))
	}
	switch o := obj.(type) {
	case v1.SLO:
		// SLOs keep input order, so names are indexed beside them.
		if prev, ok := l.sloNames[o.Metadata.Name]; ok {
			dup("SLO", o.Metadata.Name, prev)
			return
		}
		l.sloNames[o.Metadata.Name] = d
		l.slos = append(l.slos, object[v1.SLO]{o, d, mapPath, ext})
	case v1.SLI:
		addNamed(l.slis, o.Metadata.Name, object[v1.SLI]{v: o, d: d, mapPath: mapPath}, dup)
	case v1.Service:
		addNamed(l.services, o.Metadata.Name, object[v1.Service]{v: o, d: d, mapPath: mapPath}, dup)
	case v1.DataSource:
		addNamed(l.dataSources, o.Metadata.Name, object[v1.DataSource]{v: o, d: d, mapPath: mapPath}, dup)
	case v1.AlertPolicy:
		addNamed(l.policies, o.Metadata.Name, object[v1.AlertPolicy]{v: o, d: d, mapPath: mapPath}, dup)
	case v1.AlertCondition:
		addNamed(l.conditions, o.Metadata.Name, object[v1.AlertCondition]{v: o, d: d, mapPath: mapPath}, dup)
	case v1.AlertNotificationTarget:
		addNamed(l.targets, o.Metadata.Name, object[v1.AlertNotificationTarget]{v: o, d: d, mapPath: mapPath}, dup)
	default:
		l.problems = append(l.problems, d.errorf("kind", "kind %s is not supported", obj.GetKind()))
	}
}

// sharedService tells whether a Service joins one already defined: several
// shorthand documents may share a service, and a shorthand document may join
// a plain OpenSLO Service. The first definition keeps its display name and
// description; a later, different one is reported and ignored. Two plain
// OpenSLO Services of one name stay an error.
func (l *loader) sharedService(d *doc, svc v1.Service, mapPath func(string) string) bool {
	prev, ok := l.services[svc.Metadata.Name]
	if !ok {
		return false
	}
	if reflect.DeepEqual(prev.v, svc) {
		return true
	}
	if !isShorthand(d) && !isShorthand(prev.d) {
		return false
	}
	if svc.Metadata.DisplayName != "" && svc.Metadata.DisplayName != prev.v.Metadata.DisplayName ||
		svc.Spec.Description != "" && svc.Spec.Description != prev.v.Spec.Description {
		l.problems = append(l.problems, d.warnf(mapPath("metadata.name"), "service %q is described at %s; the display name and description given here are ignored", svc.Metadata.Name, location(prev.d)))
	}
	return true
}

func isShorthand(d *doc) bool { return scalar(d, "apiVersion") == ShorthandAPIVersion }

func addNamed[T any](m map[string]object[T], name string, o object[T], dup func(kind, name string, other *doc)) {
	if prev, ok := m[name]; ok {
		dup(fmt.Sprintf("%T", o.v)[3:], name, prev.d)
		return
	}
	m[name] = o
}

// locate is where a property path lies inside the object, file:line.
func (o object[T]) locate(path string) string {
	if o.d.node != nil {
		if n := o.d.at(o.mapPath(path)); n != nil {
			return fmt.Sprintf("%s:%d", o.d.file, n.Line)
		}
	}
	return location(o.d)
}

func location(d *doc) string {
	if d.node != nil {
		return fmt.Sprintf("%s:%d", d.file, d.node.Line)
	}
	return d.file
}
