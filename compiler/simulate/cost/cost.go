package cost

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"
	"github.com/inferslo/inferslo/compiler/simulate/workload"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/templates"
)

// Options set the cardinality and history of a cost measurement.
type Options struct {
	// Shape is the workload per SLO; default 200 pods × 4 models.
	Shape synth.Shape
	// History is how much data precedes the measured evaluation; default
	// 1h. Windows longer than that are projected (see Cost).
	History time.Duration
	// Evaluations is how many evaluations are timed at the end; default 5.
	Evaluations int
	// Scratch is the folder the replays keep their storage in, one
	// folder each, removed as they end; "" is the system's temporary
	// folder.
	Scratch string
}

// RuleCost is what one way of writing the rules costs per evaluation of all
// groups.
type RuleCost struct {
	Rules int `json:"rules"`
	// Samples is what the engine's query statistics counted (TotalSamples)
	// per evaluation of all groups with History of data.
	Samples int64 `json:"samples"`
	// Projected scales each query's samples to its full range (a 28d
	// window reads 28d/History times what it read here).
	Projected int64 `json:"projected_samples"`
	// PerSecond is Projected per second of each group's evaluation
	// interval: what the rules cost Prometheus at full windows.
	PerSecond float64 `json:"projected_samples_per_second"`
	// Time is the mean wall time of one evaluation of all groups.
	Time time.Duration `json:"time_ns"`
	// ByRule is PerSecond by rule, most first: a rise names its rule.
	// Rules whose expressions are the same text share one row, since the
	// engine cannot tell their queries apart.
	ByRule []RuleRow `json:"by_rule,omitempty"`
}

// RuleRow is what one rule (or rules of one expression) of one SLO reads.
type RuleRow struct {
	SLO string `json:"slo"`
	// Rule is the record or alert name and its window, severity or tier.
	Rule      string  `json:"rule"`
	PerSecond float64 `json:"projected_samples_per_second"`
}

// Report compares inferslo's rules with a naive baseline over the same
// series, measured the same way in the same run.
type Report struct {
	Pods     int           `json:"pods"`
	Models   int           `json:"models"`
	History  time.Duration `json:"history_ns"`
	Series   int           `json:"series"`
	Inferslo RuleCost      `json:"inferslo"`
	Naive    RuleCost      `json:"naive"`
	// Sloth, Pyrra and Floor are the same SLOs' rules in Sloth's and
	// Pyrra's shapes and the floor (see SlothGroup, PyrraGroup, FloorGroup).
	// Like the naive rules they are measured without history of their own
	// recordings: Sloth's period mean of its 5m ratio (one recorded series
	// over the SLO window) counts nothing here.
	Sloth RuleCost `json:"sloth"`
	Pyrra RuleCost `json:"pyrra"`
	Floor RuleCost `json:"floor"`
	// Skipped names the SLOs left out: raw ratios and time slices, which
	// have no per-window rate form to compare with.
	Skipped []string `json:"skipped,omitempty"`
}

// Measure measures the set's rules against a naive baseline that computes
// every window from raw series (sum(rate(bad[w])) / sum(rate(total[w]))),
// as hand-written rules usually do. Each SLO gets its own workload; figures
// are summed over SLOs.
func Measure(set model.Set, opts Options) (Report, error) {
	opts.Shape.Pods = cmp.Or(opts.Shape.Pods, 200)
	opts.Shape.Models = cmp.Or(opts.Shape.Models, 4)
	opts.History = cmp.Or(opts.History, time.Hour)
	opts.Evaluations = cmp.Or(opts.Evaluations, 5)
	rep := Report{Pods: opts.Shape.Pods, Models: opts.Shape.Models, History: opts.History}
	// Annotation text costs Prometheus nothing per evaluation.
	text, err := templates.Load("")
	if err != nil {
		return Report{}, err
	}
	for _, slo := range set.SLOs {
		// The baseline rates raw series per window; a raw ratio or a
		// time-slice SLI has no such form to compare with.
		if slo.TimeAveraged() {
			rep.Skipped = append(rep.Skipped, slo.Name)
			continue
		}
		g, err := irules.Group(slo, text)
		if err != nil {
			return Report{}, fmt.Errorf("slo %s: %w", slo.Name, err)
		}
		type measured struct {
			group rulefmt.RuleGroup
			into  *RuleCost
			// warm evaluates the rules through the history: inferslo's
			// long windows read their own recordings, which must exist.
			warm bool
		}
		runs := []measured{{g, &rep.Inferslo, true}}
		for _, o := range []struct {
			build func(model.SLO) (rulefmt.RuleGroup, error)
			into  *RuleCost
		}{{NaiveGroup, &rep.Naive}, {SlothGroup, &rep.Sloth}, {PyrraGroup, &rep.Pyrra}, {FloorGroup, &rep.Floor}} {
			other, err := o.build(slo)
			if err != nil {
				return Report{}, fmt.Errorf("slo %s: %w", slo.Name, err)
			}
			runs = append(runs, measured{other, o.into, false})
		}
		for _, c := range runs {
			n, err := measure(slo, c.group, opts, c.warm, c.into)
			if err != nil {
				return Report{}, fmt.Errorf("slo %s: %w", slo.Name, err)
			}
			if c.warm {
				rep.Series += n
			}
		}
	}
	return rep, nil
}

// measure loads one group over a fresh workload with History of data and
// adds its cost to into. It returns the number of synthetic series.
func measure(slo model.SLO, g rulefmt.RuleGroup, opts Options, warm bool, into *RuleCost) (int, error) {
	run, err := prepareCost(slo, g, opts, warm)
	if err != nil {
		return 0, err
	}
	defer run.close()
	var elapsed time.Duration
	var samples, projected int64
	for i := 0; i < opts.Evaluations; i++ {
		d, err := run.evalOnce()
		if err != nil {
			return 0, err
		}
		elapsed += d
		samples, projected = run.h.Counted.Samples, run.h.Counted.Projected
	}
	rows, err := ruleRows(slo.Name, g, run.h.Counted.ByQuery, run.eval)
	if err != nil {
		return 0, err
	}
	into.ByRule = append(into.ByRule, rows...)
	slices.SortStableFunc(into.ByRule, func(a, b RuleRow) int { return cmp.Compare(b.PerSecond, a.PerSecond) })
	into.Rules += len(g.Rules)
	into.Samples += samples
	into.Projected += projected
	into.PerSecond += float64(projected) / run.eval.Seconds()
	into.Time += elapsed / time.Duration(opts.Evaluations)
	return len(run.d.Workload.Series), nil
}

// costRun is one group over a workload whose history is already written.
type costRun struct {
	h       *prom.Harness
	d       *workload.Driver
	t, eval time.Duration
	history time.Duration
}

func prepareCost(slo model.SLO, g rulefmt.RuleGroup, opts Options, warm bool) (*costRun, error) {
	data, err := yaml.Marshal(rulefmt.RuleGroups{Groups: []rulefmt.RuleGroup{g}})
	if err != nil {
		return nil, err
	}
	h, err := prom.NewHarness(map[string][]byte{"cost.rules.yaml": data}, func(string) bool { return true }, true, opts.Scratch)
	if err != nil {
		return nil, err
	}
	w, err := synth.New(slo, opts.Shape)
	if err != nil {
		h.Close()
		return nil, err
	}
	scrape := slo.Scrape()
	run := &costRun{h: h, d: workload.NewDriver(h, w, slo.ErrorBudget().Float(), scrape, opts.History),
		eval: h.Groups[0].Interval(), t: -opts.History, history: opts.History}
	step := run.eval
	if !warm {
		// The naive rules read only raw series: no need to evaluate
		// them while the history fills.
		step = opts.History
	}
	for ; run.t < 0; run.t += step {
		if err := run.d.Advance(run.t, workload.Constant(10, workload.HealthyBurn), nil); err != nil {
			run.close()
			return nil, err
		}
		if warm {
			h.Eval(run.t)
		}
	}
	h.Counted.Ranges = map[string]prom.Reach{}
	return run, nil
}

// evalOnce appends the next scrapes, evaluates the group once and returns
// the wall time of the evaluation; h.counted holds its query statistics.
func (r *costRun) evalOnce() (time.Duration, error) {
	if err := r.d.Advance(r.t, workload.Constant(10, workload.HealthyBurn), nil); err != nil {
		return 0, err
	}
	*r.h.Counted = prom.QueryCount{Ranges: r.h.Counted.Ranges, History: r.history, ByQuery: map[string]int64{}}
	start := time.Now()
	// Rule errors are not the cost's business: the queries ran.
	r.h.Eval(r.t)
	d := time.Since(start)
	r.t += r.eval
	return d, nil
}

func (r *costRun) close() { r.h.Close() }

// ruleRows attributes the projected samples of one evaluation, by query
// text, to the group's rules: the rules manager queries each rule by its
// parsed expression's text.
func ruleRows(slo string, g rulefmt.RuleGroup, byQuery map[string]int64, eval time.Duration) ([]RuleRow, error) {
	p := query.NewParser()
	var rows []RuleRow
	row := map[string]int{}
	for _, r := range g.Rules {
		e, err := p.ParseExpr(r.Expr)
		if err != nil {
			return nil, fmt.Errorf("rule %s%s: %w", r.Record, r.Alert, err)
		}
		name := ruleName(r)
		qs := e.String()
		if i, ok := row[qs]; ok {
			rows[i].Rule += " = " + name
			continue
		}
		row[qs] = len(rows)
		rows = append(rows, RuleRow{SLO: slo, Rule: name, PerSecond: float64(byQuery[qs]) / eval.Seconds()})
	}
	return rows, nil
}

// ruleName names a rule within its group: its record or alert name and the
// label telling it from the group's other rules of that name.
func ruleName(r rulefmt.Rule) string {
	name := r.Record + r.Alert
	for _, l := range []string{model.LabelWindow, model.LabelBurnTier, "severity", "le"} {
		if v, ok := r.Labels[l]; ok && v != "" {
			name += fmt.Sprintf("{%s=%q}", l, v)
			break
		}
	}
	return name
}

// NaiveGroup is the baseline: every window's error ratio straight from raw
// series, and the same burn-rate alerts over those ratios.
func NaiveGroup(slo model.SLO) (rulefmt.RuleGroup, error) {
	g := rulefmt.RuleGroup{Name: "naive-" + slo.Name, Interval: prommodel.Duration(slo.Evaluation)}
	name := "naive:sli_error:ratio"
	for _, w := range slo.Windows() {
		total, err := query.RateOf(slo.SLI.Total.Expr, w)
		if err != nil {
			return g, err
		}
		var expr string
		switch {
		case slo.SLI.Bad != nil:
			bad, err := query.RateOf(slo.SLI.Bad.Expr, w)
			if err != nil {
				return g, err
			}
			expr = fmt.Sprintf("%s / %s", bad, total)
		case slo.SLI.Good != nil:
			good, err := query.RateOf(slo.SLI.Good.Expr, w)
			if err != nil {
				return g, err
			}
			expr = fmt.Sprintf("1 - %s / %s", good, total)
		default:
			return g, fmt.Errorf("the SLI has neither good nor bad events")
		}
		g.Rules = append(g.Rules, rulefmt.Rule{Record: name, Expr: expr, Labels: map[string]string{
			model.LabelSLO: slo.Name, model.LabelWindow: model.FormatDuration(w)}})
	}
	budget := slo.ErrorBudget().String()
	for _, t := range slo.Alerting.Tiers {
		var pairs []string
		for _, p := range t.Windows {
			pairs = append(pairs, fmt.Sprintf("(%s{slo=%q,window=%q} / %s > %s and on () %s{slo=%q,window=%q} / %s > %s)",
				name, slo.Name, model.FormatDuration(p.Long), budget, p.Factor,
				name, slo.Name, model.FormatDuration(p.Short), budget, p.Factor))
		}
		g.Rules = append(g.Rules, rulefmt.Rule{Alert: "NaiveBurn", Expr: strings.Join(pairs, " or "),
			For: prommodel.Duration(t.For), Labels: map[string]string{"severity": t.Severity}})
	}
	return g, nil
}

// WriteTable renders the report next to the baseline.
func (r Report) WriteTable(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Cardinality: %d pods x %d models (%d synthetic series); %s of history\n\n",
		r.Pods, r.Models, r.Series, model.FormatDuration(r.History))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "RULES\tCOUNT\tSAMPLES/EVAL\tPROJECTED TO FULL WINDOWS\tPROJECTED SAMPLES/S\tOF SLOTH'S\tTIME/EVAL\t")
	for _, row := range []struct {
		name string
		c    RuleCost
	}{{"inferslo", r.Inferslo}, {"naive", r.Naive}, {"sloth shape", r.Sloth}, {"pyrra shape", r.Pyrra}, {"floor", r.Floor}} {
		share := "-"
		if r.Sloth.PerSecond > 0 {
			share = fmt.Sprintf("%.3f%%", 100*row.c.PerSecond/r.Sloth.PerSecond)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%s\t%s\t\n", row.name, row.c.Rules, row.c.Samples, row.c.Projected, row.c.PerSecond, share, row.c.Time.Round(time.Microsecond))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rows := r.Inferslo.ByRule; len(rows) > 0 {
		fmt.Fprintf(&b, "\ninferslo by rule, projected samples/s (rules that read nothing left out):\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, row := range rows {
			if row.PerSecond > 0 {
				fmt.Fprintf(tw, "  %.2f\t%s\t%s\n", row.PerSecond, row.SLO, row.Rule)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(&b, "\nNot measured (raw ratio or time slices, no per-window baseline): %s\n", strings.Join(r.Skipped, ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}
