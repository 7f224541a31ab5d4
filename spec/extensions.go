package spec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
)

// Extensions are an SLO's facts beyond OpenSLO v1, typed. The shorthand
// fills them directly; plain OpenSLO carries them as inferslo.dev/*
// annotations, read once by decodeExtensions. Export writes them back as
// annotations, so exported specs stay plain OpenSLO.
//
// A new fact is a field here and a row in extensionTable.
type Extensions struct {
	Engine          string
	EngineVersion   string
	EngineMetrics   string // a custom engine's catalog entry, as YAML
	SLI             string
	Threshold       string
	Selector        string
	TTFTDenominator string
	ScrapeInterval  time.Duration // zero: not given
	Evaluation      time.Duration // zero: not given
	RunbookURL      string
	DashboardURL    string
	NoData          *bool
	MinEvents       string
	Autoscaling     *ShorthandAutoscaling
	BurnAlerts      *bool
	GroupBy         []string
	AlertLabels     map[string]string
	Severities      map[string]string
	ScaleOnBurn     *bool
	Tier            string
	HistogramType   string
	NativeSchema    *int
	Buckets         map[string][]float64
	Outage          *bool
	// QueueBacklog and LoadShedding are nil when not given; Enabled false
	// turns the signal off.
	QueueBacklog *ShorthandBacklog
	LoadShedding *ShorthandShedding
	Maintenance  []ShorthandMaintenance

	// bad holds the decoding problem of each annotation that did not
	// decode; it is reported where the fact is used, so a problem stops
	// what it stopped when the annotation was read there.
	bad map[string]string
}

// extension is one row of the table: an annotation key, the shorthand
// property it comes from ("" for none; objectivePath is replaced by the
// objective's), whether sub-paths of its JSON map onto the shorthand's,
// how its text is checked, and how its value is written and read.
type extension struct {
	key       string
	shorthand string
	nested    bool
	// text says why the annotation's text is unusable, or ""; nil: one
	// line of safe text.
	text func(s string) string
	// encode returns the annotation text, "" when the fact is unset.
	encode func(e *Extensions) (string, error)
	// decode sets the fact from annotation text, returning a problem or "".
	decode func(e *Extensions, s string) string
}

// Text checks of the table's rows besides one line of safe text.
func proseText(s string) string   { return textProblem(s, prose) }
func oneLineText(s string) string { return textProblem(s, oneLine) }

// jsonChecked leaves the text to decoding, which checks each field.
func jsonChecked(string) string { return "" }

func boolProblem(s string) string {
	if s != "true" && s != "false" {
		return fmt.Sprintf("%q is not true or false", s)
	}
	return ""
}

const objectivePath = "{objective}"

func extensionTable() []extension {
	return []extension{
		text(AnnotationEngine, "", func(e *Extensions) *string { return &e.Engine }),
		text(AnnotationEngineVersion, "", func(e *Extensions) *string { return &e.EngineVersion }),
		checked(text(AnnotationEngineMetrics, "", func(e *Extensions) *string { return &e.EngineMetrics }), proseText),
		text(AnnotationSLI, "", func(e *Extensions) *string { return &e.SLI }),
		text(AnnotationThreshold, objectivePath+".threshold", func(e *Extensions) *string { return &e.Threshold }),
		text(AnnotationSelector, "spec.selector", func(e *Extensions) *string { return &e.Selector }),
		text(AnnotationTTFTDenominator, "", func(e *Extensions) *string { return &e.TTFTDenominator }),
		duration(AnnotationScrapeInterval, "spec.scrapeInterval", func(e *Extensions) *time.Duration { return &e.ScrapeInterval }),
		duration(AnnotationEvaluation, "spec.evaluationInterval", func(e *Extensions) *time.Duration { return &e.Evaluation }),
		checked(text(AnnotationRunbookURL, "", func(e *Extensions) *string { return &e.RunbookURL }), runbookProblem),
		checked(text(annotationPrefix+"dashboard-url", "spec.alerting.dashboardURL", func(e *Extensions) *string { return &e.DashboardURL }), dashboardProblem),
		boolean(AnnotationNoData, "", boolProblem, func(e *Extensions) **bool { return &e.NoData }),
		text(AnnotationMinEvents, "", func(e *Extensions) *string { return &e.MinEvents }),
		jsonOf(AnnotationAutoscaling, "spec.autoscaling", "invalid autoscaling JSON: %v", func(e *Extensions) **ShorthandAutoscaling { return &e.Autoscaling }),
		boolean(AnnotationBurnAlerts, "", boolProblem, func(e *Extensions) **bool { return &e.BurnAlerts }),
		{
			key: AnnotationGroupBy, shorthand: "spec.groupBy", nested: true,
			encode: func(e *Extensions) (string, error) { return strings.Join(e.GroupBy, ","), nil },
			decode: func(e *Extensions, s string) string {
				for _, name := range strings.Split(s, ",") {
					e.GroupBy = append(e.GroupBy, strings.TrimSpace(name))
				}
				return ""
			},
		},
		labelsOf(AnnotationAlertLabels, "spec.alerting.labels", func(e *Extensions) *map[string]string { return &e.AlertLabels }),
		labelsOf(AnnotationSeverities, "spec.alerting.severities", func(e *Extensions) *map[string]string { return &e.Severities }),
		boolean(AnnotationScaleOnBurn, "", nil, func(e *Extensions) **bool { return &e.ScaleOnBurn }),
		text(AnnotationTier, "spec.tier", func(e *Extensions) *string { return &e.Tier }),
		text(AnnotationHistogramType, "", func(e *Extensions) *string { return &e.HistogramType }),
		{
			key: AnnotationNativeSchema,
			encode: func(e *Extensions) (string, error) {
				if e.NativeSchema == nil {
					return "", nil
				}
				return strconv.Itoa(*e.NativeSchema), nil
			},
			decode: func(e *Extensions, s string) string {
				n, err := strconv.Atoi(s)
				if err != nil {
					return nativeSchemaProblem(s)
				}
				e.NativeSchema = &n
				return ""
			},
		},
		{
			key: AnnotationBuckets, shorthand: "spec.buckets", text: jsonChecked,
			encode: func(e *Extensions) (string, error) { return jsonText(e.Buckets, len(e.Buckets) > 0) },
			decode: func(e *Extensions, s string) string {
				if json.Unmarshal([]byte(s), &e.Buckets) != nil {
					return "not a JSON object of bucket lists by SLI role, such as {\"ttft\": [0.1, 0.3, 1]}"
				}
				return ""
			},
		},
		{
			// Empty reads as not given: the tier's default.
			key: AnnotationOutage, shorthand: "spec.alerting.outage", nested: true,
			encode: func(e *Extensions) (string, error) { return boolText(e.Outage), nil },
			decode: func(e *Extensions, s string) string {
				if s == "" {
					return ""
				}
				return setBool(&e.Outage, s)
			},
		},
		signal(AnnotationQueueBacklog, "spec.alerting.queueBacklog", "invalid JSON (perReplica, for), or false: %v", func(e *Extensions) **ShorthandBacklog { return &e.QueueBacklog },
			func(b *ShorthandBacklog) **bool { return &b.Enabled }),
		signal(AnnotationLoadShedding, "spec.alerting.loadShedding", "invalid JSON (shed, reduceContext: above, for), or false: %v", func(e *Extensions) **ShorthandShedding { return &e.LoadShedding },
			func(s *ShorthandShedding) **bool { return &s.Enabled }),
		{
			key: AnnotationMaintenance, shorthand: "spec.alerting.maintenance", nested: true, text: jsonChecked,
			encode: func(e *Extensions) (string, error) { return jsonText(e.Maintenance, len(e.Maintenance) > 0) },
			decode: func(e *Extensions, s string) string {
				if err := strictJSON(s, &e.Maintenance); err != nil {
					return fmt.Sprintf("not a JSON list of windows ({\"schedule\",\"timeZone\",\"duration\"} or {\"start\",\"end\"}): %v", err)
				}
				return ""
			},
		},
	}
}

// encodeError is a fact that did not encode, such as a NaN bucket.
type encodeError struct {
	key string
	err error
}

// Annotations encodes the facts as OpenSLO annotations, for plain OpenSLO
// that carries them.
func (e *Extensions) Annotations() (map[string]string, error) {
	ann, err := e.annotations()
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", err.key, err.err)
	}
	return ann, nil
}

// annotations encodes the facts as OpenSLO annotations.
func (e *Extensions) annotations() (map[string]string, *encodeError) {
	out := map[string]string{}
	for _, x := range extensionTable() {
		s, err := x.encode(e)
		if err != nil {
			return nil, &encodeError{x.key, err}
		}
		if s != "" {
			out[x.key] = s
		}
	}
	return out, nil
}

// decodeExtensions reads the facts of an SLO's annotations; unknown keys
// are left to the annotation check.
func decodeExtensions(ann map[string]string) *Extensions {
	e := &Extensions{}
	for _, x := range extensionTable() {
		s, ok := ann[x.key]
		if !ok {
			continue
		}
		if msg := x.decode(e, s); msg != "" {
			if e.bad == nil {
				e.bad = map[string]string{}
			}
			e.bad[x.key] = msg
		}
	}
	return e
}

// extensionProblem reports the decoding problem of key at its annotation,
// telling whether there was one.
func extensionProblem(o object[v1.SLO], key string, ps *Problems) bool {
	msg, bad := o.ext.bad[key]
	if bad {
		*ps = append(*ps, o.errorf("metadata.annotations."+key, "%s", msg))
	}
	return bad
}

// shorthandPath maps an annotation's property path onto the shorthand's:
// the row's path, with the rest of a nested path kept.
func shorthandPath(p, objective string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "metadata.annotations.")
	if !ok {
		return "", false
	}
	for _, x := range extensionTable() {
		tail, ok := strings.CutPrefix(rest, x.key)
		if !ok || x.shorthand == "" || (tail != "" && (!x.nested || !strings.ContainsAny(tail[:1], ".["))) {
			continue
		}
		return strings.Replace(x.shorthand, objectivePath, objective, 1) + tail, true
	}
	return "spec", true
}

func text(key, shorthand string, field func(*Extensions) *string) extension {
	return extension{
		key: key, shorthand: shorthand,
		encode: func(e *Extensions) (string, error) { return *field(e), nil },
		decode: func(e *Extensions, s string) string { *field(e) = s; return "" },
	}
}

// checked is x with its own text check.
func checked(x extension, check func(string) string) extension {
	x.text = check
	return x
}

func duration(key, shorthand string, field func(*Extensions) *time.Duration) extension {
	return extension{
		key: key, shorthand: shorthand,
		encode: func(e *Extensions) (string, error) {
			if *field(e) == 0 {
				return "", nil
			}
			return model.FormatDuration(*field(e)), nil
		},
		decode: func(e *Extensions, s string) string {
			d, err := model.ParseDuration(s)
			if err != nil || d <= 0 {
				return fmt.Sprintf("%q is not a duration such as 30s", s)
			}
			*field(e) = d
			return ""
		},
	}
}

func boolean(key, shorthand string, check func(string) string, field func(*Extensions) **bool) extension {
	return extension{
		key: key, shorthand: shorthand, text: check,
		encode: func(e *Extensions) (string, error) { return boolText(*field(e)), nil },
		decode: func(e *Extensions, s string) string { return setBool(field(e), s) },
	}
}

func boolText(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

func setBool(dst **bool, s string) string {
	if msg := boolProblem(s); msg != "" {
		return msg
	}
	v := s == "true"
	*dst = &v
	return ""
}

func jsonText(v any, set bool) (string, error) {
	if !set {
		return "", nil
	}
	js, err := json.Marshal(v)
	return string(js), err
}

// strictJSON decodes an object refusing unknown fields.
func strictJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func jsonOf[T any](key, shorthand, invalid string, field func(*Extensions) **T) extension {
	return extension{
		key: key, shorthand: shorthand, nested: true, text: jsonChecked,
		encode: func(e *Extensions) (string, error) { return jsonText(*field(e), *field(e) != nil) },
		decode: func(e *Extensions, s string) string {
			v := new(T)
			if err := strictJSON(s, v); err != nil {
				return fmt.Sprintf(invalid, err)
			}
			*field(e) = v
			return ""
		},
	}
}

func labelsOf(key, shorthand string, field func(*Extensions) *map[string]string) extension {
	return extension{
		key: key, shorthand: shorthand, nested: true, text: jsonChecked,
		encode: func(e *Extensions) (string, error) { return jsonText(*field(e), len(*field(e)) > 0) },
		decode: func(e *Extensions, s string) string {
			if err := json.Unmarshal([]byte(s), field(e)); err != nil {
				return fmt.Sprintf("not a JSON object of strings: %v", err)
			}
			return ""
		},
	}
}

// signal is a default-on signal: "false" turns it off, a JSON object tunes
// it; an enabled signal with nothing tuned is not written.
func signal[T any](key, shorthand, invalid string, field func(*Extensions) **T, enabled func(*T) **bool) extension {
	// "false" or JSON whose decoding checks each field (a JSON object
	// may well end in "}}", which is no template here).
	x := jsonOf(key, shorthand, invalid, field)
	encodeJSON, decodeJSON := x.encode, x.decode
	x.encode = func(e *Extensions) (string, error) {
		if v := *field(e); v != nil && !boolOr(*enabled(v), true) {
			return "false", nil
		}
		return encodeJSON(e)
	}
	x.decode = func(e *Extensions, s string) string {
		if s == "false" {
			off, no := new(T), false
			*enabled(off) = &no
			*field(e) = off
			return ""
		}
		return decodeJSON(e, s)
	}
	return x
}
