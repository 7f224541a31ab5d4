package spec

import (
	"errors"
	"fmt"
	"time"

	"github.com/inferslo/inferslo/compiler/query"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/model"
)

// maxSlice keeps a slice within the page tier's shortest window (5m for a
// 30d SLO), so the fastest alert still reads a whole number of slices.
const maxSlice = 5 * time.Minute

// thresholdOps maps OpenSLO's operators onto PromQL's.
var thresholdOps = map[v1.Operator]string{v1.OperatorLTE: "<=", v1.OperatorLT: "<", v1.OperatorGTE: ">=", v1.OperatorGT: ">"}

// readTimeslices reads the time-slice fields of one objective into s: the slice
// window and target, the threshold of a threshold SLI, and the evaluation
// interval (one evaluation per slice). It reports false when the objective
// cannot compile.
func readTimeslices(o object[v1.SLO], sli *object[v1.SLI], obj v1.SLOObjective, path string, s *model.SLO, ps *Problems) bool {
	// The SLI's kind comes from its spec, so a query refused already does
	// not turn a threshold SLI into a ratio one here; with no SLI at all
	// (an indicatorRef to nothing) only what holds for both is checked.
	threshold := s.SLI.Threshold != nil || sli != nil && sli.v.Spec.ThresholdMetric != nil
	ratio := !threshold && sli != nil
	if s.Budgeting == model.Occurrences {
		switch {
		case threshold:
			*ps = append(*ps, o.errorf("spec.budgetingMethod", "a thresholdMetric SLI is judged per time slice; use budgetingMethod: Timeslices with timeSliceWindow and timeSliceTarget on the objective, or a ratioMetric SLI"))
			return false
		case ratio && (obj.Operator != "" || obj.Value != nil):
			*ps = append(*ps, o.errorf(path+".op", "op and value belong to threshold SLIs (thresholdMetric with budgetingMethod: Timeslices); a ratio SLI needs only target"))
			return false
		case obj.TimeSliceWindow != nil || obj.TimeSliceTarget != nil:
			*ps = append(*ps, o.errorf(path+".timeSliceWindow", "time slices belong to budgetingMethod: Timeslices or RatioTimeslices; drop timeSliceWindow and timeSliceTarget, or change the budgeting method"))
			return false
		}
		return true
	}
	ts := &model.Timeslices{Average: s.Budgeting == model.RatioTimeslices}
	ok := true
	fail := func(p Problem) { *ps = append(*ps, p); ok = false }
	if obj.TimeSliceWindow == nil {
		fail(o.errorf(path, "%s budgeting needs timeSliceWindow, the slice length, such as 1m", s.Budgeting))
		return false
	}
	w, valid := openSLODuration(*obj.TimeSliceWindow)
	if !valid {
		fail(o.errorf(path+".timeSliceWindow", "%q is not a duration: write a whole number and a unit m or h, such as 1m", obj.TimeSliceWindow))
		return false
	}
	ts.Window = w
	if _, given := o.v.Metadata.Annotations[AnnotationScrapeInterval]; !given && ts.Window < 4*s.ScrapeInterval && ts.Window >= 4*time.Second && ts.Window%(4*time.Second) == 0 {
		// A slice's rates need four samples: short slices assume the
		// scrape interval that gives them, and say so (the info series
		// carries it too).
		s.ScrapeInterval = ts.Window / 4
		*ps = append(*ps, o.warnf(path+".timeSliceWindow", "the rules assume Prometheus scrapes every %s, four samples per %s slice (the info series says so in %s); state your scrape interval with metadata.annotations.%s",
			model.FormatDuration(s.ScrapeInterval), obj.TimeSliceWindow, model.LabelScrapeInterval, AnnotationScrapeInterval))
	}
	minSlice := 4 * s.ScrapeInterval
	switch {
	case ts.Window < minSlice || ts.Window > maxSlice:
		fail(o.errorf(path+".timeSliceWindow", "%s is outside the slices inferslo records, %s (four scrape intervals: a slice's rates need samples) to %s; with 1m slices, scrape every 15s (metadata.annotations.%s)",
			obj.TimeSliceWindow, model.FormatDuration(minSlice), model.FormatDuration(maxSlice), AnnotationScrapeInterval))
	case s.Window%ts.Window != 0 || ts.Window%time.Second != 0:
		fail(o.errorf(path+".timeSliceWindow", "%s does not divide the SLO window %s into whole slices; use a whole number of seconds that does, such as 1m", obj.TimeSliceWindow, model.FormatDuration(s.Window)))
	}
	if s.Calendar != nil && (15*time.Minute)%ts.Window != 0 {
		// Period boundaries fall on local midnights, whole quarter hours
		// of UTC in every time zone: a slice dividing 15m never straddles one.
		fail(o.errorf(path+".timeSliceWindow", "%s does not divide 15 minutes, so calendar period boundaries (local midnights) could cut a slice; use 1m, 3m or 5m", obj.TimeSliceWindow))
	}
	switch {
	case threshold && ts.Average:
		fail(o.errorf("spec.budgetingMethod", "RatioTimeslices averages slice ratios and needs a ratioMetric SLI; a thresholdMetric SLI counts good slices with budgetingMethod: Timeslices"))
	case threshold:
		if obj.TimeSliceTarget != nil && *obj.TimeSliceTarget < 1 {
			// OpenSLO's share of the slice's evaluations that must meet
			// op and value: the SLI is evaluated every evaluation
			// interval within the slice.
			readEvaluations(o, *obj.TimeSliceTarget, path, s, ts, fail, ps)
		}
		if s.SLI.Threshold == nil || !readThreshold(o, sli, obj, path, s, ts, ps) {
			ok = false
		}
		if len(s.GroupBy) > 0 {
			fail(o.errorf("metadata.annotations."+AnnotationGroupBy, "a threshold query decides its own labels; write the grouping into the query's aggregation instead"))
		}
	case !ratio:
		ok = false
	case obj.Operator != "" || obj.Value != nil:
		fail(o.errorf(path+".op", "op and value belong to threshold SLIs; a ratio SLI's slice is judged by its share of good events"))
	case ts.Average && obj.TimeSliceTarget != nil:
		fail(o.errorf(path+".timeSliceTarget", "RatioTimeslices averages the slices' own ratios, with no per-slice target; drop timeSliceTarget, or use budgetingMethod: Timeslices to count good slices"))
	case ts.Average:
	case obj.TimeSliceTarget == nil:
		fail(o.errorf(path, "Timeslices budgeting of a ratio SLI needs timeSliceTarget, the share of good events that makes a slice good, such as 0.95"))
	default:
		ts.Target = model.DecimalFromFloat(*obj.TimeSliceTarget)
	}
	if v, given := o.v.Metadata.Annotations[AnnotationEvaluation]; given && ts.Evaluation == 0 && s.Evaluation != ts.Window {
		fail(o.errorf("metadata.annotations."+AnnotationEvaluation, "%s: time-slice rules evaluate once per slice, so each sample is one slice; drop the annotation or set it to the timeSliceWindow %s", v, obj.TimeSliceWindow))
	}
	s.Evaluation = ts.Window
	if _, given := o.v.Metadata.Annotations[AnnotationMinEvents]; given {
		fail(o.errorf("metadata.annotations."+AnnotationMinEvents, "a time-slice SLO's alerts count slices, not events, and slices without traffic are left out already; drop the annotation"))
	}
	s.Timeslices = ts
	return ok
}

// readEvaluations reads the evaluation interval of a threshold SLI whose
// slices hold several evaluations (timeSliceTarget below 1): the
// inferslo.dev/evaluation-interval annotation, by default the scrape
// interval. The rule group still evaluates once per slice and reads the
// slice's evaluations with a subquery.
func readEvaluations(o object[v1.SLO], target float64, path string, s *model.SLO, ts *model.Timeslices, fail func(Problem), ps *Problems) {
	ts.Target = model.DecimalFromFloat(target)
	ts.Evaluation = s.ScrapeInterval
	if _, given := o.v.Metadata.Annotations[AnnotationEvaluation]; given {
		ts.Evaluation = s.Evaluation
	}
	if ts.Evaluation < s.ScrapeInterval || ts.Evaluation%s.ScrapeInterval != 0 || ts.Window%ts.Evaluation != 0 {
		fail(o.errorf("metadata.annotations."+AnnotationEvaluation, "%s: a threshold SLI with timeSliceTarget %g is evaluated every evaluation interval within each slice; use a whole number of scrape intervals (%s) that divides the slice %s, such as %s",
			model.FormatDuration(ts.Evaluation), target, model.FormatDuration(s.ScrapeInterval), model.FormatDuration(ts.Window), model.FormatDuration(s.ScrapeInterval)))
		return
	}
	if n := int64(ts.Window / ts.Evaluation); float64(n-1)/float64(n) < target {
		*ps = append(*ps, o.warnf(path+".timeSliceTarget", "%g of %d evaluations per %s slice (one every %s) means all %d: a slice with one evaluation missing op and value is bad (%d of %d is %.3g)",
			target, n, model.FormatDuration(ts.Window), model.FormatDuration(ts.Evaluation), n, n-1, n, float64(n-1)/float64(n)))
	}
}

// readThreshold reads op and value of a threshold SLI's objective and checks
// its query: read once per slice, a percentile over exactly the slice; read
// several times per slice, any query of the moment.
func readThreshold(o object[v1.SLO], sli *object[v1.SLI], obj v1.SLOObjective, path string, s *model.SLO, ts *model.Timeslices, ps *Problems) bool {
	op, known := thresholdOps[obj.Operator]
	switch {
	case !known:
		*ps = append(*ps, o.errorf(path+".op", "%q is not an operator; a threshold SLI needs op: lte, lt, gte or gt", obj.Operator))
		return false
	case obj.Value == nil:
		*ps = append(*ps, o.errorf(path+".value", "required: the bound a slice's value must meet, such as 0.3 (seconds) for op: lte"))
		return false
	}
	th := *s.SLI.Threshold
	th.Op, th.Value = op, model.DecimalFromFloat(*obj.Value)
	s.SLI.Threshold = &th
	if sli == nil {
		return false
	}
	const at = "spec.thresholdMetric.metricSource.spec.query"
	if ts.Evaluation == 0 {
		phi, err := checkSliceQuery(th.Query.Expr, ts.Window)
		if err != nil {
			*ps = append(*ps, sli.errorf(at, "%v", err))
			return false
		}
		th.Quantile, th.Range = phi, ts.Window
		return true
	}
	phi, rng, warning, err := checkEvaluatedQuery(th.Query.Expr, 4*s.ScrapeInterval, ts.Window)
	if err != nil {
		*ps = append(*ps, sli.errorf(at, "%v", err))
		return false
	}
	if warning != "" {
		*ps = append(*ps, sli.warnf(at, "%s", warning))
	}
	th.Quantile, th.Range = phi, rng
	return true
}

var errStop = errors.New("stop")

// checkSliceQuery accepts a percentile of a histogram's rates over exactly
// one slice: histogram_quantile(φ, …rate(x_bucket[slice])…), with no @,
// offset or subquery that would read other times than the slice. It returns φ.
func checkSliceQuery(q string, slice time.Duration) (float64, error) {
	expr, err := query.NewParser().ParseExpr(q)
	if err != nil {
		return 0, fmt.Errorf("invalid PromQL: %w", err)
	}
	example := fmt.Sprintf("histogram_quantile(0.99, sum by (le) (rate(x_bucket[%s])))", model.FormatDuration(slice))
	call, ok := query.Unparen(expr).(*parser.Call)
	if !ok || call.Func.Name != "histogram_quantile" {
		return 0, fmt.Errorf("a threshold SLI read once per slice (timeSliceTarget: 1) is a percentile of a histogram over the slice, such as %s; with a timeSliceTarget below 1 any query is evaluated several times per slice", example)
	}
	phi, ok := query.Unparen(call.Args[0]).(*parser.NumberLiteral)
	if !ok || phi.Val <= 0 || phi.Val >= 1 {
		return 0, fmt.Errorf("the quantile %s is not a number between 0 and 1 (exclusive), such as 0.99", call.Args[0])
	}
	var problem error
	ranges := 0
	parser.Inspect(call.Args[1], func(n parser.Node, path []parser.Node) error {
		switch n := n.(type) {
		case *parser.SubqueryExpr:
			problem = fmt.Errorf("a subquery reads other times than the slice; rate the buckets over the slice, as in %s", example)
		case *parser.MatrixSelector:
			ranges++
			parent, _ := lastNode(path).(*parser.Call)
			switch {
			case parent == nil || parent.Func.Name != "rate" && parent.Func.Name != "increase":
				problem = fmt.Errorf("the range %s is not read by rate() or increase(); a slice's percentile reads the buckets' rates over the slice, as in %s", n, example)
			case n.Range != slice:
				problem = fmt.Errorf("the range [%s] of %s differs from timeSliceWindow %s: a slice's value must read that slice and no more; use [%s]",
					model.FormatDuration(n.Range), n.VectorSelector, model.FormatDuration(slice), model.FormatDuration(slice))
			}
		case *parser.VectorSelector:
			if _, ranged := lastNode(path).(*parser.MatrixSelector); !ranged {
				problem = fmt.Errorf("%s is read without a range; a slice's percentile reads the buckets' rates over the slice, as in %s", n, example)
			}
			if n.Timestamp != nil || n.StartOrEnd != 0 || n.OriginalOffset != 0 {
				problem = fmt.Errorf("%s carries @ or offset, which reads another time than the slice; drop it", n)
			}
		}
		if problem != nil {
			return errStop
		}
		return nil
	})
	if problem == nil && ranges == 0 {
		problem = fmt.Errorf("the percentile reads no rate over the slice, as in %s", example)
	}
	if problem != nil {
		return 0, problem
	}
	return phi.Val, nil
}

// rateFuncs need samples across their range: four scrape intervals.
var rateFuncs = map[string]bool{"rate": true, "increase": true, "irate": true, "delta": true, "idelta": true, "deriv": true}

// checkEvaluatedQuery accepts the query of a threshold SLI evaluated several
// times per slice: any PromQL yielding an instant vector, its value at each
// evaluation being the SLI (a gauge, or a percentile over a range). It
// refuses @ and offset, which read another time than the evaluation, and a
// rate over fewer than four scrapes; it warns about a range longer than the
// slice, which carries one moment into the evaluations of the slices after.
// It returns φ and the range when the query is a percentile with one range
// (what the simulator replays), zero otherwise.
func checkEvaluatedQuery(q string, shortestRate, slice time.Duration) (float64, time.Duration, string, error) {
	expr, err := query.NewParser().ParseExpr(q)
	if err != nil {
		return 0, 0, "", fmt.Errorf("invalid PromQL: %w", err)
	}
	if expr.Type() != parser.ValueTypeVector {
		return 0, 0, "", fmt.Errorf("the query yields a %s; a threshold SLI is an instant vector, one value per series at each evaluation", expr.Type())
	}
	var problem error
	var longest time.Duration
	ranges := map[time.Duration]bool{}
	parser.Inspect(expr, func(n parser.Node, path []parser.Node) error {
		switch n := n.(type) {
		case *parser.MatrixSelector:
			ranges[n.Range] = true
			longest = max(longest, n.Range)
			if parent, _ := lastNode(path).(*parser.Call); parent != nil && rateFuncs[parent.Func.Name] && n.Range < shortestRate {
				problem = fmt.Errorf("the range [%s] of %s holds fewer than four scrapes for %s(); use at least [%s]",
					model.FormatDuration(n.Range), n.VectorSelector, parent.Func.Name, model.FormatDuration(shortestRate))
			}
		case *parser.SubqueryExpr:
			ranges[n.Range] = true
			longest = max(longest, n.Range)
		case *parser.VectorSelector:
			if n.Timestamp != nil || n.StartOrEnd != 0 || n.OriginalOffset != 0 {
				problem = fmt.Errorf("%s carries @ or offset, which reads another time than the evaluation; drop it", n)
			}
		}
		if problem != nil {
			return errStop
		}
		return nil
	})
	if problem != nil {
		return 0, 0, "", problem
	}
	warning := ""
	if longest > slice {
		warning = fmt.Sprintf("the range [%s] is longer than the %s slice: each evaluation reads %s back, so one moment counts in the evaluations of the slices after its own",
			model.FormatDuration(longest), model.FormatDuration(slice), model.FormatDuration(longest))
	}
	call, ok := query.Unparen(expr).(*parser.Call)
	if !ok || call.Func.Name != "histogram_quantile" || len(ranges) != 1 {
		return 0, 0, warning, nil
	}
	phi, ok := query.Unparen(call.Args[0]).(*parser.NumberLiteral)
	if !ok || phi.Val <= 0 || phi.Val >= 1 {
		return 0, 0, warning, nil
	}
	return phi.Val, longest, warning, nil
}

func lastNode(path []parser.Node) parser.Node {
	if len(path) == 0 {
		return nil
	}
	return path[len(path)-1]
}

// roundToSlices lengthens every alert window to a whole number of slices:
// a window reads whole slices or it would count a slice it only partly holds.
// It warns when one bad slice alone exceeds a pair's factor over its long
// window: the alert then fires on a single bad slice.
func roundToSlices(o object[v1.SLO], s model.SLO, tiers []model.Tier, ps *Problems) {
	slice := s.Timeslices.Window
	up := func(d time.Duration) time.Duration { return (d + slice - 1) / slice * slice }
	for i := range tiers {
		for j := range tiers[i].Windows {
			p := &tiers[i].Windows[j]
			p.Long, p.Short = up(p.Long), up(p.Short)
			n := int64(p.Long / slice)
			if p.Factor.Mul(s.ErrorBudget()).Mul(model.NewDecimal(n, 1)).Cmp(model.NewDecimal(1, 1)) < 0 {
				*ps = append(*ps, o.warnf("spec.objectives[0].target", "one bad slice in the %s tier's %s window (%d slices) is already a burn above %sx: the alert fires on a single bad slice (of RatioTimeslices: one slice whose requests all fail); lower the target or lengthen the window",
					tiers[i].Severity, model.FormatDuration(p.Long), n, p.Factor))
			}
		}
	}
}

// shortestWindow is the shortest alert window an SLO can have: four scrape
// intervals, so rate() has samples, and for time slices one slice.
func shortestWindow(s model.SLO) time.Duration {
	if s.Timeslices != nil {
		return max(s.Timeslices.Window, 4*s.ScrapeInterval)
	}
	return 4 * s.ScrapeInterval
}
