package spec

import (
	"time"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
)

// Signals beyond burn rates: the outage tier, the queue-backlog early
// warning and the load-shedding recordings. The shorthand sets them under
// spec.alerting; plain OpenSLO carries them in annotations, "false" turning
// one off and a JSON object tuning it.
const (
	AnnotationOutage       = annotationPrefix + "outage-alert"  // "true" | "false"
	AnnotationQueueBacklog = annotationPrefix + "queue-backlog" // "false" | {"perReplica":"6","for":"1m"}
	AnnotationLoadShedding = annotationPrefix + "load-shedding" // "false" | {"shed":{"above":"2","for":"30s"},"reduceContext":{...}}
)

// ShorthandToggle turns a default-on signal off.
type ShorthandToggle struct {
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
}

// ShorthandBacklog sets the early warning on queue depth per replica.
type ShorthandBacklog struct {
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// PerReplica is the waiting requests per replica to warn at; default
	// from the capacity facts.
	PerReplica string `yaml:"perReplica,omitempty" json:"perReplica,omitempty"`
	For        string `yaml:"for,omitempty" json:"for,omitempty"`
}

// ShorthandShedding sets the load-shedding signals.
type ShorthandShedding struct {
	Enabled       *bool            `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	Shed          *ShorthandSignal `yaml:"shed,omitempty" json:"shed,omitempty"`
	ReduceContext *ShorthandSignal `yaml:"reduceContext,omitempty" json:"reduceContext,omitempty"`
}

// ShorthandSignal is one load-shedding signal: active while the TTFT
// quantile stays above `above` times the threshold for `for`.
type ShorthandSignal struct {
	Above string `yaml:"above,omitempty" json:"above,omitempty"`
	For   string `yaml:"for,omitempty" json:"for,omitempty"`
}

// expandSignals sets the shorthand's signal settings: off, tuned, or left
// to the defaults (nil). The outage tier goes to every objective; the
// queue-backlog and load-shedding settings only where ttft is true.
func expandSignals(a ShorthandAlerting, ext *Extensions, ttft bool) {
	off := false
	if a.Outage != nil && !boolOr(a.Outage.Enabled, true) {
		ext.Outage = &off
	}
	if !ttft {
		return
	}
	if b := a.QueueBacklog; b != nil {
		switch {
		case !boolOr(b.Enabled, true):
			ext.QueueBacklog = &ShorthandBacklog{Enabled: &off}
		case b.PerReplica != "" || b.For != "":
			ext.QueueBacklog = &ShorthandBacklog{PerReplica: b.PerReplica, For: b.For}
		}
	}
	if s := a.LoadShedding; s != nil {
		switch {
		case !boolOr(s.Enabled, true):
			ext.LoadShedding = &ShorthandShedding{Enabled: &off}
		case s.Shed != nil || s.ReduceContext != nil:
			ext.LoadShedding = &ShorthandShedding{Shed: s.Shed, ReduceContext: s.ReduceContext}
		}
	}
}

// hasCounts tells whether an SLI's events are counted, which the outage
// tier's own window needs.
func hasCounts(s model.SLO) bool {
	return s.Timeslices == nil && s.SLI.Raw == nil && s.SLI.Total != nil
}

// signals resolves the outage tier, backlog warning and load shedding of
// an SLO whose tiers are set.
func signals(o object[v1.SLO], s model.SLO, a *model.Alerting, ps *Problems) {
	ext := o.ext
	// The outage tier joins a page tier: an SLO that pages nobody (batch,
	// or pages turned off) gets none.
	hasPage := false
	for _, t := range a.Tiers {
		hasPage = hasPage || t.Severity == model.PageTier
	}
	if !extensionProblem(o, AnnotationOutage, ps) && boolOr(ext.Outage, true) {
		if hasPage && hasCounts(s) {
			t := model.OutageTierOf(s.Objective, shortestWindow(s))
			a.Outage = &t
		} else if ext.Outage != nil {
			*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationOutage, "the outage tier needs a page tier and an SLI of counted events (not a raw ratio or time slices)"))
		}
	}
	inf := s.Inference
	ttft := inf != nil && inf.Role == "ttft"
	if extensionProblem(o, AnnotationQueueBacklog, ps) {
	} else if b := ext.QueueBacklog; b == nil || boolOr(b.Enabled, true) {
		a.Backlog = backlog(o, s, b, ps)
	}
	_, bad := ext.bad[AnnotationLoadShedding]
	switch sh := ext.LoadShedding; {
	case sh != nil && !boolOr(sh.Enabled, true):
	case ttft:
		if !extensionProblem(o, AnnotationLoadShedding, ps) {
			a.Shedding = shedding(o, sh, ps)
		}
	case sh != nil || bad:
		*ps = append(*ps, o.errorf("metadata.annotations."+AnnotationLoadShedding, "load-shedding signals read the TTFT histogram; SLO %s is not a ttft SLO", s.Name))
	}
}

// backlog is the early warning of a TTFT SLO whose engine exports a queue
// gauge: stated, or derived from the capacity facts as BacklogShare × the
// waiting requests per replica whose wait alone spends the TTFT threshold
// (slots × threshold / mean service time).
func backlog(o object[v1.SLO], s model.SLO, stated *ShorthandBacklog, ps *Problems) *model.Backlog {
	path := "metadata.annotations." + AnnotationQueueBacklog
	given := stated != nil
	var sb ShorthandBacklog
	if given {
		sb = *stated
	}
	inf := s.Inference
	if inf == nil || inf.Role != "ttft" || inf.Signals.QueueDepth == "" {
		if given {
			*ps = append(*ps, o.errorf(path, "the queue-backlog warning reads the engine's queue gauge beside a ttft SLO; SLO %s has none", s.Name))
		}
		return nil
	}
	b := &model.Backlog{For: model.BacklogFor}
	if sb.For != "" {
		f, err := model.ParseDuration(sb.For)
		if err != nil || f < 0 {
			*ps = append(*ps, o.errorf(path+".for", "%q is not a duration such as 1m", sb.For))
			return nil
		}
		b.For = f
	}
	if sb.PerReplica != "" {
		d, err := model.ParseDecimal(sb.PerReplica)
		if err != nil || d.Cmp(model.NewDecimal(0, 1)) <= 0 {
			*ps = append(*ps, o.errorf(path+".perReplica", "%q is not a number of waiting requests above zero", sb.PerReplica))
			return nil
		}
		b.PerReplica = d
		return b
	}
	at := s.Autoscaling
	if at == nil || at.Capacity.MeanServiceTime <= 0 || inf.Threshold.IsZero() {
		// Nothing to derive it from: no warning, unless asked for.
		if given {
			*ps = append(*ps, o.errorf(path+".perReplica", "required without capacity facts (autoscaling.capacity.meanServiceTime) to derive it from"))
		}
		return nil
	}
	slots := model.NewDecimal(1, 1)
	if !at.Capacity.ReplicaConcurrency.IsZero() {
		slots = at.Capacity.ReplicaConcurrency
	}
	service := model.NewDecimal(int64(at.Capacity.MeanServiceTime), int64(time.Second))
	b.PerReplica = model.BacklogShare.Mul(slots).Mul(inf.Threshold).Quo(service)
	b.Derived = true
	return b
}

// shedding reads the load-shedding settings over the defaults.
func shedding(o object[v1.SLO], stated *ShorthandShedding, ps *Problems) *model.Shedding {
	path := "metadata.annotations." + AnnotationLoadShedding
	out := model.DefaultShedding()
	if stated == nil {
		return &out
	}
	ss := *stated
	ok := true
	read := func(name string, in *ShorthandSignal, sig *model.ShedSignal) {
		if in == nil {
			return
		}
		if in.Above != "" {
			d, err := model.ParseDecimal(in.Above)
			if err != nil || d.Cmp(model.NewDecimal(1, 1)) <= 0 {
				*ps = append(*ps, o.errorf(path+"."+name+".above", "%q is not a factor of the TTFT threshold above 1 (2 is twice the threshold)", in.Above))
				ok = false
			}
			sig.Factor = d
		}
		if in.For != "" {
			f, err := model.ParseDuration(in.For)
			if err != nil || f < 0 || f > time.Hour {
				*ps = append(*ps, o.errorf(path+"."+name+".for", "%q is not a duration from 0s to 1h, such as 30s", in.For))
				ok = false
			}
			sig.For = f
		}
	}
	read("shed", ss.Shed, &out.Shed)
	read("reduceContext", ss.ReduceContext, &out.ReduceContext)
	if !ok {
		return nil
	}
	return &out
}
