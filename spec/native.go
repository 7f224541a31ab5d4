package spec

import (
	"fmt"
	"math"
	"strconv"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec/engine"
)

// histogramType applies the SLO's histogram-type annotation to its engine:
// native turns the engine's _count queries into histogram_count. It returns
// nil after reporting a problem.
func (l *loader) histogramType(o object[v1.SLO], eng *engine.Engine, ps *Problems) *engine.Engine {
	path := "metadata.annotations." + AnnotationHistogramType
	t := o.ext.HistogramType
	if t != "" && t != engine.Native && t != engine.Classic {
		*ps = append(*ps, o.errorf(path, "%q is not valid: classic (le buckets) or native (exponential buckets, no le)", t))
		return nil
	}
	out, err := eng.As(t)
	if err != nil {
		*ps = append(*ps, o.errorf(path, "%v", err))
		return nil
	}
	return out
}

// nativeSchema is the SLO's native histogram schema, DefaultSchema without.
func nativeSchema(o object[v1.SLO], ps *Problems) int {
	if extensionProblem(o, AnnotationNativeSchema, ps) || o.ext.NativeSchema == nil {
		return model.DefaultNativeSchema
	}
	n := *o.ext.NativeSchema
	if n < model.MinNativeSchema || n > model.MaxNativeSchema {
		*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationNativeSchema, "%s", nativeSchemaProblem(strconv.Itoa(n))))
		return model.DefaultNativeSchema
	}
	return n
}

func nativeSchemaProblem(v string) string {
	return fmt.Sprintf("%q is not a native histogram schema: valid are %d to %d", v, model.MinNativeSchema, model.MaxNativeSchema)
}

// nativeInexact says, after the threshold's text, why a threshold (in the
// histogram's unit) is not counted exactly by histogram_fraction, and by
// how much it may be off; empty when it is a bucket boundary of the schema
// (and so of every finer one).
func nativeInexact(h *engine.Histogram, threshold float64, schema int) string {
	lower, upper, exact := model.NativeBucket(threshold, schema)
	if exact {
		return ""
	}
	unit := h.Scale()
	below, above := math.Exp2(math.Floor(math.Log2(threshold))), math.Exp2(math.Ceil(math.Log2(threshold)))
	return fmt.Sprintf("is not a bucket boundary of the native histogram %s at schema %d: histogram_fraction interpolates inside the bucket (%s, %s], "+
		"so the requests in that bucket count as good by their share of it, and the SLI may be off by those requests (the bucket is %.3g%% of the threshold wide); "+
		"%s and %s, powers of two, are boundaries at every schema",
		h.Metric, schema, secondsText(lower/unit), secondsText(upper/unit), 100*(upper-lower)/threshold,
		secondsText(below/unit), secondsText(above/unit))
}
