package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/inferslo/inferslo/spec/engine"
)

// TestShorthandFactsSurviveTheirAnnotations: every fact the shorthand sets
// is written as an annotation and read back unchanged, so plain OpenSLO
// exported from a shorthand spec compiles as the shorthand does.
func TestShorthandFactsSurviveTheirAnnotations(t *testing.T) {
	cat, err := engine.Load()
	if err != nil {
		t.Fatal(err)
	}
	l := newLoader(cat)
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l.addFile(f, b)
	}
	n := 0
	for _, o := range l.slos {
		if o.ext == nil {
			continue
		}
		n++
		back := decodeExtensions(o.v.Metadata.Annotations)
		if len(back.bad) > 0 {
			t.Errorf("SLO %s: its annotations do not decode: %v", o.v.Metadata.Name, back.bad)
		}
		if !reflect.DeepEqual(normalised(o.ext), normalised(back)) {
			t.Errorf("SLO %s: facts differ after the annotations\n set: %+v\nread: %+v", o.v.Metadata.Name, *o.ext, *back)
		}
	}
	if n == 0 {
		t.Fatal("no shorthand SLO among the examples")
	}
}

// normalised treats empty and absent collections alike, as the
// annotations do.
func normalised(e *Extensions) Extensions {
	c := *e
	if len(c.GroupBy) == 0 {
		c.GroupBy = nil
	}
	if len(c.AlertLabels) == 0 {
		c.AlertLabels = nil
	}
	if len(c.Severities) == 0 {
		c.Severities = nil
	}
	if len(c.Buckets) == 0 {
		c.Buckets = nil
	}
	return c
}

// TestAnnotationPathsMapOntoTheShorthand: a problem found in an annotation
// of an expanded SLO points at the shorthand property it came from.
func TestAnnotationPathsMapOntoTheShorthand(t *testing.T) {
	tests := []struct{ path, want string }{
		{"metadata.annotations." + AnnotationThreshold, "spec.objectives[2].threshold"},
		{"metadata.annotations." + AnnotationGroupBy + "[1]", "spec.groupBy[1]"},
		{"metadata.annotations." + AnnotationAutoscaling + ".capacity.peakRPS", "spec.autoscaling.capacity.peakRPS"},
		{"metadata.annotations." + AnnotationQueueBacklog + ".for", "spec.alerting.queueBacklog.for"},
		{"metadata.annotations." + AnnotationScrapeInterval, "spec.scrapeInterval"},
		{"metadata.annotations." + AnnotationEngineVersion, "spec"},
		{"metadata.annotations." + AnnotationEngine + "-version", "spec"},
		{"metadata.annotations." + AnnotationBuckets + ".ttft", "spec"},
	}
	for _, tt := range tests {
		if got, _ := shorthandPath(tt.path, "spec.objectives[2]"); got != tt.want {
			t.Errorf("%s maps to %s, want %s", tt.path, got, tt.want)
		}
	}
}
