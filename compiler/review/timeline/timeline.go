package timeline

import (
	"cmp"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/compiler/simulate/synth"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

// TimelineOptions shape the review scenario; the zero value uses the
// defaults.
type TimelineOptions struct {
	// Healthy is the healthy history before the burn; default one day.
	Healthy time.Duration
	// SkipBurn replays the healthy part only.
	SkipBurn bool
	// Recovery caps the healthy tail after the burn; default 3h. The tail
	// ends earlier once every alert the burn fired has resolved and settled.
	Recovery time.Duration
	// Step is the query step; default 5m. BurnStep is the finer step from
	// an hour before the burn on; default 1m.
	Step, BurnStep time.Duration
	// Shape of the synthetic workload; default 3 pods, 1 model.
	Shape synth.Shape
	// RPS is the mean requests per second per pod; default 10.
	RPS float64
	// Parallel is how many services replay at once; default GOMAXPROCS.
	Parallel int
	// Done, when set, is called as each service's replay ends, from the
	// goroutine that ran it (a command shows progress with it).
	Done func()
	// Scratch is the folder the replays keep their storage in, one
	// folder each, removed as they end; "" is the system's temporary
	// folder.
	Scratch string
	// everyRule evaluates whole groups at every interval, step by step
	// (tests compare).
	everyRule bool
}

func (o TimelineOptions) withDefaults() TimelineOptions {
	o.Healthy = cmp.Or(o.Healthy, 24*time.Hour)
	o.Recovery = cmp.Or(o.Recovery, 3*time.Hour)
	o.Step = cmp.Or(o.Step, 5*time.Minute)
	o.BurnStep = cmp.Or(o.BurnStep, time.Minute)
	o.Shape.Pods = cmp.Or(o.Shape.Pods, 3)
	o.Shape.Models = cmp.Or(o.Shape.Models, 1)
	o.RPS = cmp.Or(o.RPS, 10)
	o.Parallel = cmp.Or(o.Parallel, runtime.GOMAXPROCS(0))
	return o
}

// Timeline is what a review scenario looked like: every query's result over
// the replay and the intervals during which alerts fired.
type Timeline struct {
	// Series holds each query's result, keyed by the query as given.
	Series map[string][]TimeSeries
	// Alerts are the firing intervals, as the rules manager saw them after
	// every evaluation, ordered by service, SLO, alert and start.
	Alerts []AlertInterval
	// Burns are the fast burns, one per service replayed with a burn.
	Burns []Burn
	// Skipped lists SLOs that could not be replayed, with the reason.
	Skipped []string
	// From and To bound the replay.
	From, To time.Time
}

// TimeSeries is one series of a query result.
type TimeSeries struct {
	Labels map[string]string
	Points []Sample
}

// Sample is one point of a series.
type Sample struct {
	T time.Time
	V float64
}

// AlertInterval is one stretch during which an alert fired; To is the
// first evaluation that found it resolved, or the end of the replay.
type AlertInterval struct {
	Name, Severity, SLO, Service string
	// Group names the group of a grouped SLO the alert fired for
	// (`model_name="vllm-a"`); empty for an ungrouped SLO.
	Group    string
	From, To time.Time
}

// Burn is a service's fast burn: its span and each SLO's burn rate.
type Burn struct {
	Service  string
	From, To time.Time
	// Rates maps SLO names to the burn rate (error ratio over budget).
	Rates map[string]float64
	// Groups maps grouped SLOs to the one group that burns; the others
	// stay healthy.
	Groups map[string]string
}

// Describe says in a sentence or two what the timeline replayed.
func (tl Timeline) Describe() string {
	const caveat = " Windows longer than the replay, the SLO window's budget among them, count only the replayed traffic, as in a Prometheus started with it."
	if len(tl.Burns) == 0 {
		return "a healthy day: traffic follows a daily cycle, errors stay below the error budget rate." + caveat
	}
	grouped := ""
	for _, b := range tl.Burns {
		if len(b.Groups) > 0 {
			grouped = " A grouped SLO burns in one group only (the first model); its other groups stay healthy, and only the burning group may page."
			break
		}
	}
	return "a healthy day (traffic following a daily cycle, errors below the error budget rate), " +
		"then a fast burn on every SLO until its page alert fires (its quickest ticket when it pages nobody), then recovery." + grouped + caveat
}

// RunServiceTimelines compiles the set's rules and replays one review
// scenario per service: a healthy day, a fast burn on every SLO of the
// service until every page alert fires (the quickest ticket of an SLO that
// pages nobody), then recovery. Each SLO runs in its own harness (its own
// rule group over its own engine-shaped series, as in Run); the first SLO
// of each engine and selector also carries the engine's token counters and
// its queue, running and KV-cache gauges. Each query queries(service) lists
// is evaluated at the options' step in every harness of the service it may
// read from, and the results are merged: a label set seen twice keeps the
// harness whose SLI histogram the query names, else the first. Each
// service's timeline goes to each as soon as it is done, with the service
// and its index among the set's services in spec order. Services replay
// Parallel at a time, each with its own rules only, so memory holds the
// replays in flight rather than the whole set. each runs on the replaying
// goroutine, concurrently for different services.
func RunServiceTimelines(set model.Set, queries func(service string) []string, opts TimelineOptions, each func(i int, service string, tl Timeline) error) error {
	opts = opts.withDefaults()
	services := set.InSpecOrder()
	errs := make([]error, len(services))
	var failed atomic.Bool
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for i, svc := range services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if failed.Load() {
				return
			}
			tl, err := replayService(svc.Name, svc.SLOs, queries(svc.Name), opts)
			if err == nil {
				err = each(i, svc.Name, tl)
			}
			if opts.Done != nil {
				opts.Done()
			}
			if err != nil {
				errs[i] = fmt.Errorf("service %s: %w", svc.Name, err)
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	return cmp.Or(errs...)
}

// replayService compiles one service's rules and replays its scenario.
func replayService(svc string, slos []model.SLO, queries []string, opts TimelineOptions) (Timeline, error) {
	// The replay reads series and alert states, never annotation text.
	files, err := irules.Build(model.Set{SLOs: slos}, nil)
	if err != nil {
		return Timeline{}, fmt.Errorf("compile rules: %w", err)
	}
	// Parsed once for the service: each SLO's harness loads its own group.
	x, err := prom.IndexRules(files)
	if err != nil {
		return Timeline{}, err
	}
	parsed := make([]parser.Expr, len(queries))
	p := query.NewParser()
	for i, q := range queries {
		if parsed[i], err = p.ParseExpr(q); err != nil {
			return Timeline{}, fmt.Errorf("query %q: %w", q, err)
		}
	}
	r := &serviceReplay{service: svc, opts: opts, rules: x.ByName()}
	if err := r.replay(slos, queries, parsed); err != nil {
		return Timeline{}, err
	}
	tl := Timeline{Series: r.series, Alerts: r.alerts, Skipped: r.skipped, From: prom.Epoch(), To: prom.Epoch().Add(r.end)}
	if tl.Series == nil {
		tl.Series = map[string][]TimeSeries{}
	}
	if r.burn != nil {
		tl.Burns = []Burn{*r.burn}
	}
	sortAlerts(tl.Alerts)
	return tl, nil
}

// Merge joins service timelines into one, in order: a query's label set
// seen in two keeps the first timeline's series.
func Merge(tls []Timeline) Timeline {
	out := Timeline{Series: map[string][]TimeSeries{}, From: prom.Epoch()}
	for _, tl := range tls {
		for q, ss := range tl.Series {
			out.Series[q] = mergeSeries(out.Series[q], ss)
		}
		out.Alerts = append(out.Alerts, tl.Alerts...)
		out.Burns = append(out.Burns, tl.Burns...)
		out.Skipped = append(out.Skipped, tl.Skipped...)
		if tl.To.After(out.To) {
			out.To = tl.To
		}
	}
	if out.To.IsZero() {
		out.To = out.From
	}
	sortAlerts(out.Alerts)
	return out
}

// sortAlerts orders firing intervals by service, SLO, alert and start.
func sortAlerts(as []AlertInterval) {
	sort.SliceStable(as, func(i, j int) bool {
		a, b := as[i], as[j]
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		if a.SLO != b.SLO {
			return a.SLO < b.SLO
		}
		if a.Name != b.Name || a.Severity != b.Severity {
			return a.Name+a.Severity < b.Name+b.Severity
		}
		return a.From.Before(b.From)
	})
}
