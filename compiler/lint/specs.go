package lint

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/inferslo/inferslo/compiler/scrape"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
	"github.com/inferslo/inferslo/spec/engine"
)

// SpecChecker compares the series each SLO's artifacts read with the scrapes
// given (one per engine, say): the SLI's queries that the rules record, the
// bucket at the threshold, the gauge a KEDA trigger reads, and the engine
// series the dashboard panels show.
type SpecChecker struct {
	Scrapes []*Scrape
	Catalog *engine.Catalog
}

// use is one PromQL query an artifact reads, and where a problem with it
// is reported.
type use struct {
	query string
	// what names the reader in messages.
	what string
	path string
	// warn: an empty panel is not a broken SLO.
	warn bool
}

// Check is a spec.Checker: it returns a located finding for every selector
// that no scrape satisfies.
func (c *SpecChecker) Check(s model.SLO) []spec.Problem {
	var out []spec.Problem
	seen := map[string]bool{}
	add := func(fs []spec.Problem) {
		for _, f := range fs {
			if key := f.Path + f.Message; !seen[key] {
				seen[key] = true
				out = append(out, f)
			}
		}
	}
	for _, u := range c.uses(s) {
		expr, err := query.NewParser().ParseExpr(u.query)
		if err != nil {
			continue // reported where the query is read
		}
		terms := addends(expr)
		if len(terms) < 2 {
			for _, vs := range query.Selectors(expr) {
				add(c.selector(s, u, vs))
			}
			continue
		}
		// A sum of counters (success + admission rejections): the rules
		// read an absent term as 0 while another is there, so a term the
		// scrape lacks is a warning, unless every term is missing.
		optional := u
		optional.warn = true
		var found [][]spec.Problem
		missing := 0
		for _, t := range terms {
			var fs []spec.Problem
			for _, vs := range query.Selectors(t) {
				fs = append(fs, c.selector(s, optional, vs)...)
			}
			if len(fs) > 0 {
				missing++
			}
			found = append(found, fs)
		}
		for _, fs := range found {
			for i := range fs {
				if missing == len(terms) && !u.warn {
					fs[i].Severity = spec.Error
				} else if missing < len(terms) {
					fs[i].Message += "; the rules read the term as 0 while it is absent"
				}
			}
			add(fs)
		}
	}
	return out
}

// addends flattens a top-level sum of terms (a + b + c) into its terms.
func addends(e parser.Expr) []parser.Expr {
	if b, ok := query.Unparen(e).(*parser.BinaryExpr); ok && b.Op == parser.ADD && b.VectorMatching == nil || ok && b.Op == parser.ADD && len(b.VectorMatching.MatchingLabels) == 0 {
		return append(addends(b.LHS), addends(b.RHS)...)
	}
	return []parser.Expr{e}
}

func (c *SpecChecker) uses(s model.SLO) []use {
	const objective = "spec.objectives[0]"
	var out []use
	for _, q := range []*model.Query{s.SLI.Total, s.SLI.Good, s.SLI.Bad, s.SLI.Raw} {
		if q != nil {
			out = append(out, use{query: q.Expr, what: "the SLI", path: objective})
		}
	}
	if t := s.SLI.Threshold; t != nil {
		out = append(out, use{query: t.Query.Expr, what: "the SLI", path: objective})
	}
	inf := s.Inference
	if inf == nil {
		return out
	}
	scoped := func(q string) string {
		if sq, err := query.Scoped(q, inf.Selector); err == nil {
			return sq
		}
		return q
	}
	engineAt := "metadata.annotations." + spec.AnnotationEngine
	if g := inf.Signals.QueueDepth; g != "" {
		if s.Autoscaling != nil {
			out = append(out, use{query: scoped(g), what: "the KEDA queue-depth trigger", path: "metadata.annotations." + spec.AnnotationAutoscaling})
		} else {
			out = append(out, use{query: scoped(g), what: "the dashboard's queue panel", path: engineAt, warn: true})
		}
	}
	panels := []struct{ what, metric string }{
		{"running requests", inf.Signals.Running},
		{"KV cache", inf.Signals.KVCacheUsage},
		{"request rate", inf.Signals.Requests},
		{"prompt tokens", inf.Signals.PromptTokens},
		{"generation tokens", inf.Signals.GenerationTokens},
	}
	for _, h := range []string{inf.Signals.TTFT, inf.Signals.ITL, inf.Signals.TPOT, inf.Signals.E2E, inf.Signals.Queue} {
		if h != "" && h != inf.Histogram && !inf.Native {
			panels = append(panels, struct{ what, metric string }{"latency", h + "_bucket"})
		}
	}
	for _, p := range panels {
		if p.metric != "" {
			out = append(out, use{query: scoped(p.metric), what: "the dashboard's " + p.what + " panel", path: engineAt, warn: true})
		}
	}
	return out
}

// selector checks one vector selector against the pooled scrapes.
func (c *SpecChecker) selector(s model.SLO, u use, vs *parser.VectorSelector) []spec.Problem {
	name := engine.SelectedName(vs)
	if name == "" {
		return nil
	}
	var series []map[string]string
	var sources []string
	for _, sc := range c.Scrapes {
		series = append(series, sc.Of(name)...)
		sources = append(sources, sc.Source)
	}
	if len(series) == 0 {
		// A native histogram is one series of the family's name, which
		// only a protobuf scrape carries; a text scrape shows the same
		// family as classic series, whose _count has its labels.
		for _, sc := range c.Scrapes {
			series = append(series, sc.Of(name+"_count")...)
		}
	}
	found := func(path, format string, args ...any) spec.Problem {
		sev := spec.Error
		if u.warn {
			sev = spec.Warning
		}
		return spec.Problem{Path: path, Message: u.what + " reads " + fmt.Sprintf(format, args...), Severity: sev}
	}
	if len(series) == 0 {
		if c.recordedElsewhere(name) {
			return nil
		}
		return []spec.Problem{found(u.path, "%s, but no series of that name is in the scrape (%s)%s", name, strings.Join(sources, ", "), c.hint(name))}
	}
	// A label no series of the metric has may be one Prometheus attaches
	// when it scrapes (job, instance, a relabelled namespace): a scrape
	// cannot judge it.
	var judged []*labels.Matcher
	for _, m := range vs.LabelMatchers {
		if m.Name != query.MetricNameLabel && len(scrape.Values(series, m.Name)) > 0 {
			judged = append(judged, m)
		}
	}
	var out []spec.Problem
	for _, m := range judged {
		if anyMatches(series, m) {
			continue
		}
		path := u.path
		switch {
		case m.Name == "le" && s.Inference != nil && !s.Inference.Threshold.IsZero():
			path = "metadata.annotations." + spec.AnnotationThreshold
		case s.Inference != nil && slices.Contains(s.Inference.SelectorLabels, m.Name):
			path = "metadata.annotations." + spec.AnnotationSelector
		}
		vals := scrape.Values(series, m.Name)
		if m.Name == "le" {
			out = append(out, found(path, "%s{%s}, but the scrape's %s has no such bucket; its buckets are le=%s%s", name, m, name, quoteList(vals, 40), nearestBuckets(m, vals)))
			continue
		}
		out = append(out, found(path, "%s{%s}, but the scrape has %s=%s", name, m, m.Name, quoteList(vals, 12)))
	}
	if len(out) > 0 {
		return out
	}
	for _, ls := range series {
		if seriesMatch(ls, judged) {
			return nil
		}
	}
	return []spec.Problem{found(u.path, "%s, but no series of %s in the scrape matches all of its matchers", vs, name)}
}

// recordedElsewhere is a name with a colon that no engine exposes: a
// recording rule of the user's, which no /metrics has.
func (c *SpecChecker) recordedElsewhere(name string) bool {
	if !strings.Contains(name, ":") {
		return false
	}
	if c.Catalog == nil {
		return true
	}
	_, known := c.Catalog.Metric(name)
	return !known
}

// hint names what the scrapes have instead: the catalog's rename of the
// metric when a scrape has the other name, else names of the same prefix.
func (c *SpecChecker) hint(name string) string {
	if c.Catalog != nil {
		if info, ok := c.Catalog.Metric(name); ok {
			for _, ch := range info.Changes {
				other := ch.ReplacedBy
				if other == info.Family {
					other = ch.Metric
				}
				if other == "" || !c.has(other+info.Suffix) {
					continue
				}
				if ch.Metric == info.Family {
					return fmt.Sprintf("; it has %s, which replaced it in %s %s", other+info.Suffix, ch.Engine, cmp.Or(ch.Since, ch.Removed))
				}
				return fmt.Sprintf("; it has %s, the name before %s %s: the engine is older than the spec's engine version (set engineVersion)", other+info.Suffix, ch.Engine, cmp.Or(ch.Since, ch.Removed))
			}
		}
	}
	prefix := name
	if i := strings.IndexAny(name, ":_"); i > 0 {
		prefix = name[:i+1]
	}
	var like []string
	for _, sc := range c.Scrapes {
		for _, n := range sc.Names() {
			if strings.HasPrefix(n, prefix) && !slices.Contains(like, n) {
				like = append(like, n)
			}
		}
	}
	if len(like) == 0 {
		return ""
	}
	return "; it has " + strings.Join(truncate(like, 12), ", ")
}

func (c *SpecChecker) has(name string) bool {
	return slices.ContainsFunc(c.Scrapes, func(sc *Scrape) bool { return sc.Has(name) })
}

// neighbours names the scrape's bounds on each side of an le the scrape
// lacks.
func nearestBuckets(m *labels.Matcher, vals []string) string {
	want, err := strconv.ParseFloat(m.Value, 64)
	if err != nil || m.Type != labels.MatchEqual {
		return ""
	}
	below, above := "", ""
	for _, v := range vals {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		if f < want {
			below = v
		} else if f > want && above == "" {
			above = v
		}
	}
	switch {
	case below != "" && above != "":
		return fmt.Sprintf(" (the nearest are %s and %s)", below, above)
	case below != "":
		return fmt.Sprintf(" (the nearest is %s)", below)
	case above != "":
		return fmt.Sprintf(" (the nearest is %s)", above)
	}
	return ""
}

// seriesMatch reports whether a scrape's series (its labels) matches
// every matcher.
func seriesMatch(ls map[string]string, ms []*labels.Matcher) bool {
	for _, m := range ms {
		if !m.Matches(ls[m.Name]) {
			return false
		}
	}
	return true
}

// truncate keeps at most max values, then says how many more there are.
func truncate(vs []string, max int) []string {
	if len(vs) <= max {
		return vs
	}
	return append(append([]string{}, vs[:max]...), fmt.Sprintf("… (%d more)", len(vs)-max))
}
