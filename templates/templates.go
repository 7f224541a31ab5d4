// Package templates holds the wording of the alert annotations and the
// dashboard panel descriptions inferslo generates: Go templates embedded in
// the binary, one file per text. A folder of files with the same names
// (--templates DIR) replaces any of them, say with a company's runbook
// wording.
//
// The templates use [[ ]] as delimiters, so Prometheus alert template code
// ({{ $value }}, {{ $labels.model_name }}) is written as it is and reaches
// the annotation unchanged. Spec strings are inserted as values, never
// parsed as template code, and spec validation already refused {{ and }}
// in them (spec/text.go). Every template is executed on sample data and its
// output parsed by Prometheus' template engine when it is loaded, so a
// broken template stops the run before anything is written, naming its
// file and line.
package templates

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"unicode"
	"unicode/utf8"

	"github.com/inferslo/inferslo/spec/input"

	"github.com/prometheus/prometheus/promql"
	promtemplate "github.com/prometheus/prometheus/template"
)

//go:embed *.tmpl
var builtin embed.FS

// The templates, by file name.
const (
	BurnSummary              = "alert-burn-summary.tmpl"
	BurnDescription          = "alert-burn-description.tmpl"
	BacklogSummary           = "alert-backlog-summary.tmpl"
	BacklogDescription       = "alert-backlog-description.tmpl"
	MisconfiguredSummary     = "alert-misconfigured-summary.tmpl"
	MisconfiguredDescription = "alert-misconfigured-description.tmpl"
	NoDataSummary            = "alert-nodata-summary.tmpl"
	NoDataDescription        = "alert-nodata-description.tmpl"

	PanelAbout                 = "panel-about.tmpl"
	PanelAlerts                = "panel-alerts.tmpl"
	PanelBudgetHistory         = "panel-budget-history.tmpl"
	PanelBudgetLeft            = "panel-budget-left.tmpl"
	PanelBudgetLeftPeriod      = "panel-budget-left-period.tmpl"
	PanelBudgetPeriod          = "panel-budget-period.tmpl"
	PanelBurnNow               = "panel-burn-now.tmpl"
	PanelBurnRate              = "panel-burn-rate.tmpl"
	PanelCatalog               = "panel-catalog.tmpl"
	PanelDaysLeft              = "panel-days-left.tmpl"
	PanelErrorRatio            = "panel-error-ratio.tmpl"
	PanelGoodput               = "panel-goodput.tmpl"
	PanelKVCache               = "panel-kv-cache.tmpl"
	PanelLatency               = "panel-latency.tmpl"
	PanelOverviewBudgetHistory = "panel-overview-budget-history.tmpl"
	PanelOverviewBurn          = "panel-overview-burn.tmpl"
	PanelQueue                 = "panel-queue.tmpl"
	PanelThroughput            = "panel-throughput.tmpl"
	PanelTokens                = "panel-tokens.tmpl"
)

// Names lists every template file name, sorted.
func Names() []string {
	return []string{
		BacklogDescription, BacklogSummary, BurnDescription, BurnSummary,
		MisconfiguredDescription, MisconfiguredSummary,
		NoDataDescription, NoDataSummary,
		PanelAbout, PanelAlerts, PanelBudgetHistory, PanelBudgetLeftPeriod, PanelBudgetLeft,
		PanelBudgetPeriod, PanelBurnNow, PanelBurnRate, PanelCatalog, PanelDaysLeft,
		PanelErrorRatio, PanelGoodput, PanelKVCache, PanelLatency, PanelOverviewBudgetHistory,
		PanelOverviewBurn, PanelQueue, PanelThroughput, PanelTokens,
	}
}

// isAlert says whether a template words an alert annotation, whose text
// Prometheus expands in turn.
func isAlert(name string) bool { return strings.HasPrefix(name, "alert-") }

// maxFileSize caps a template file: a few lines of prose.
const maxFileSize = 64 << 10

// Alert is the data of the alert templates. Strings from the spec (names,
// the runbook URL) hold no template code; Group and BudgetQuery are
// Prometheus template code inferslo writes.
type Alert struct {
	// SLO is the SLO's name, a DNS label ("chat-ttft").
	SLO string
	// DisplayName is the SLO's display name, or empty.
	DisplayName string
	// Service is the service's name.
	Service string
	// Objective is the target as a percentage ("99.9%").
	Objective string
	// Window is the SLO window ("28d", or a calendar period such as
	// "calendar month").
	Window string
	// RunbookURL is the spec's runbook URL, or empty.
	RunbookURL string
	// SLI names the indicator: an inference role (ttft, itl, tpot, e2e,
	// queue, errors), else ratio or threshold.
	SLI string
	// Threshold is the latency bound of an inference SLO in seconds
	// ("0.25s"); empty for an error SLO.
	Threshold string
	// SLOTier is the spec's tier (interactive or batch), or empty.
	SLOTier string
	// GroupBy are the labels the SLO is split by, or empty.
	GroupBy []string
	// Group names the alert's group from its labels, as Prometheus template
	// code (` for model_name={{ index $labels "model_name" }}`); empty for
	// an SLO without groupBy. In the no-data alert it names no group when
	// the whole SLI is absent.
	Group string

	// Burn alerts only: the alert tier (page or ticket, the burn_tier
	// label), the severity label's value, the window pairs the alert fires
	// on, and a Prometheus template pipeline that yields the query of the
	// group's budget left.
	BurnTier    string
	Severity    string
	Windows     []Window
	BudgetQuery string
	// TimeSlice is the slice of a time-slice SLO ("1m"), whose error ratio
	// is its share of bad slices, or with SliceAverage the mean of the
	// slices' error ratios; empty for an SLO budgeted in events.
	TimeSlice    string
	SliceAverage bool

	// Queue-backlog alert only: the waiting requests per replica it fires
	// above, and where that number comes from.
	BacklogPerReplica string
	BacklogBasis      string

	// Configuration alert only: the threshold bucket selectors the good
	// events read, and the total events' query.
	Buckets []string
	Total   string
}

// Window is one window pair of a burn alert.
type Window struct {
	// Factor is the burn-rate factor ("14.4").
	Factor string
	// Long and Short are the windows ("1h", "5m").
	Long, Short string
	// BudgetShare is the share of the budget a burn at Factor spends over
	// Long ("2%").
	BudgetShare string
}

// Panel is the data of the dashboard description templates; which fields
// are set depends on the panel (docs/templates.md). Grafana shows the text
// as a panel's description.
type Panel struct {
	// Service is the service of a service dashboard; empty in the overview.
	Service string
	// SLO is the SLO of a per-SLO panel.
	SLO string
	// SLI is the SLO's indicator in a few words ("ttft ≤ 0.25s (vLLM)").
	SLI string
	// Objective and ErrorBudget are percentages ("99%", "1%");
	// ObjectiveRatio and ErrorBudgetRatio the same as ratios ("0.99", "0.01").
	Objective, ErrorBudget           string
	ObjectiveRatio, ErrorBudgetRatio string
	// Window is the SLO window ("28d"), BaseWindow its shortest rate
	// window ("5m").
	Window, BaseWindow string
	// Period and Zone describe a calendar window ("calendar month",
	// "UTC, boundaries at UTC+00:00").
	Period, Zone string
	// Tiers spells out the alert tiers and their budget math, as the SLO
	// table does.
	Tiers string
	// Metric is the series the panel reads.
	Metric string
	// BurnAlert and NoDataAlert are the alert names, for the alerts panel.
	BurnAlert, NoDataAlert string
	// Latency panels: the role (ttft, itl, tpot, e2e, queue), its name in
	// words ("time to first token"), the histogram drawn, and the SLOs that
	// bound it.
	Role, RoleTitle, Histogram string
	Promises                   []Promise
}

// Promise is one SLO's latency bound, drawn as a threshold line.
type Promise struct {
	SLO       string
	Objective string // "99%"
	Threshold string // with its unit: "0.25s", "250ms"
	Window    string // "28d"
}

// Text is a loaded and validated set of templates.
type Text struct {
	templates map[string]*template.Template
	// paths name where each template came from, for errors.
	paths map[string]string
}

// OrDefault returns t, or the built-in templates when t is nil.
func OrDefault(t *Text) (*Text, error) {
	if t != nil {
		return t, nil
	}
	return Load("")
}

// Load reads the built-in templates and, when dir is not empty, replaces
// those named like a file in dir. Every template is validated before Load
// returns.
func Load(dir string) (*Text, error) {
	t := &Text{templates: map[string]*template.Template{}, paths: map[string]string{}}
	for _, name := range Names() {
		src, err := builtin.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("built-in template %s: %w", name, err)
		}
		if err := t.parse(name, "templates/"+name, src); err != nil {
			return nil, err
		}
	}
	if dir != "" {
		if err := t.override(dir); err != nil {
			return nil, err
		}
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// override replaces the templates named like the files in dir. Any other
// file is an error: a misspelt name would otherwise be ignored silently.
func (t *Text) override(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read templates: %w", err)
	}
	var unknown []string
	for _, e := range entries {
		name := e.Name()
		if _, ok := t.templates[name]; !ok {
			unknown = append(unknown, name)
			continue
		}
		p := filepath.Join(dir, name)
		src, err := input.ReadInput("template", dir, name, maxFileSize)
		if err != nil {
			return err
		}
		if err := t.parse(name, p, src); err != nil {
			return err
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("templates folder %s holds %s, which no template is named; the templates are %s",
			dir, strings.Join(unknown, ", "), strings.Join(Names(), ", "))
	}
	return nil
}

// parse parses one template. The file's final line break is not part of
// the text, so an editor's trailing newline adds nothing to an annotation.
func (t *Text) parse(name, path string, src []byte) error {
	text := strings.TrimSuffix(strings.TrimSuffix(string(src), "\n"), "\r")
	if err := plainText(text); err != nil {
		return fmt.Errorf("%s:%w", path, err)
	}
	tmpl, err := template.New(name).Delims("[[", "]]").Option("missingkey=error").
		Funcs(template.FuncMap{"join": strings.Join, "printf": boundedPrintf}).Parse(text)
	if err != nil {
		return locate(err, name, path)
	}
	if err := bounded(tmpl); err != nil {
		return fmt.Errorf("%s:%w", path, err)
	}
	t.templates[name], t.paths[name] = tmpl, path
	return nil
}

// bounded refuses what would let a template run long without writing (the
// output is bounded as it is written): loops over anything but a list of
// its data, loops in loops, and templates calling templates, which could
// recurse. What is left runs in time linear in the template and its data.
func bounded(tmpl *template.Template) error {
	if len(tmpl.Templates()) > 1 {
		return fmt.Errorf(" a template may not define templates ([[ define ]] or [[ block ]])")
	}
	return boundedNode(tmpl.Tree, tmpl.Root, false)
}

func boundedNode(tree *parse.Tree, n parse.Node, inRange bool) error {
	problem := func(n parse.Node, msg string) error {
		loc, _ := tree.ErrorContext(n)
		return fmt.Errorf("%s: %s", strings.TrimPrefix(loc, tree.ParseName+":"), msg)
	}
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := boundedNode(tree, c, inRange); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		return problem(n, "a template may not call templates")
	case *parse.IfNode:
		return boundedBranch(tree, &n.BranchNode, inRange)
	case *parse.WithNode:
		return boundedBranch(tree, &n.BranchNode, inRange)
	case *parse.RangeNode:
		if inRange {
			return problem(n, "a range may not hold another range")
		}
		if !dataList(n.Pipe) {
			return problem(n, "a range goes over a list of the data, such as .Windows, not over a number or a computed value")
		}
		return boundedBranch(tree, &n.BranchNode, true)
	}
	return nil
}

func boundedBranch(tree *parse.Tree, b *parse.BranchNode, inRange bool) error {
	if err := boundedNode(tree, b.List, inRange); err != nil {
		return err
	}
	return boundedNode(tree, b.ElseList, inRange)
}

// dataList reports whether a range's pipeline is a field of the data
// (.Windows, $.Promises).
func dataList(p *parse.PipeNode) bool {
	if len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return false
	}
	switch a := p.Cmds[0].Args[0].(type) {
	case *parse.FieldNode:
		return true
	case *parse.VariableNode:
		return len(a.Ident) > 1 && a.Ident[0] == "$"
	}
	return false
}

// maxWidth bounds a printf width or precision: fmt allocates it before
// the output bound sees a byte.
const maxWidth = 1000

// boundedPrintf is text/template's printf with widths and precisions of
// at most maxWidth.
func boundedPrintf(format string, args ...any) (string, error) {
	next := 0 // the argument a '*' takes
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			switch {
			case c == '*':
				if next < len(args) {
					if w, ok := args[next].(int); ok && (w > maxWidth || w < -maxWidth) {
						return "", fmt.Errorf("printf width %d is above %d", w, maxWidth)
					}
				}
				next++
				continue
			case c >= '0' && c <= '9':
				j := i
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				if w, err := strconv.Atoi(format[i:j]); err != nil || w > maxWidth {
					return "", fmt.Errorf("printf width or precision %s is above %d", format[i:j], maxWidth)
				}
				i = j - 1
				continue
			case strings.IndexByte("+-# .[]", c) >= 0:
				continue
			}
			if c != '%' {
				next++
			}
			break
		}
	}
	return fmt.Sprintf(format, args...), nil
}

// plainText refuses what would corrupt an annotation or a terminal: invalid
// UTF-8 and control characters other than line breaks and tabs.
func plainText(text string) error {
	for i, line := range strings.Split(text, "\n") {
		if !utf8.ValidString(line) {
			return fmt.Errorf("%d: the template is not valid UTF-8", i+1)
		}
		for _, r := range line {
			if r != '\t' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029') {
				return fmt.Errorf("%d: control character %U; a template holds text, line breaks and tabs only (line ends are \\n)", i+1, r)
			}
		}
	}
	return nil
}

// locate names the template file in a text/template error, which names the
// template ("template: NAME:LINE: ...").
func locate(err error, name, path string) error {
	return errors.New(strings.Replace(err.Error(), "template: "+name+":", path+":", 1))
}

// Alert expands an alert template: the text of one annotation, itself a
// Prometheus alert template.
func (t *Text) Alert(name string, data Alert) (string, error) { return t.execute(name, data) }

// Panel expands a dashboard description template.
func (t *Text) Panel(name string, data Panel) (string, error) { return t.execute(name, data) }

func (t *Text) execute(name string, data any) (string, error) {
	tmpl, ok := t.templates[name]
	if !ok {
		return "", fmt.Errorf("no template %s", name)
	}
	b := &boundedWriter{max: maxExpanded}
	// Most expansions are a line or a few: one allocation holds them.
	b.Grow(expandedHint)
	if err := tmpl.Execute(b, data); err != nil {
		var tooLong *tooLongError
		if errors.As(err, &tooLong) {
			return "", fmt.Errorf("%s: %w", t.paths[name], tooLong)
		}
		return "", locate(err, name, t.paths[name])
	}
	out := b.String()
	// Data is plain text already; a template could still print one
	// (printf "%c" 27).
	if err := plainText(out); err != nil {
		return "", fmt.Errorf("%s: the expanded text, line %w", t.paths[name], err)
	}
	return out, nil
}

// maxExpanded bounds what one template expands to: an annotation or a
// panel description is a few lines; a loop in a template cannot fill memory.
const maxExpanded = 64 << 10

// expandedHint is the room an expansion starts with.
const expandedHint = 256

// boundedWriter fails a write that would take it past max bytes. A
// strings.Builder hands its text over without a copy.
type boundedWriter struct {
	strings.Builder
	max int
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > w.max {
		return 0, &tooLongError{max: w.max}
	}
	return w.Builder.Write(p)
}

// tooLongError is an expansion past maxExpanded.
type tooLongError struct{ max int }

func (e *tooLongError) Error() string {
	return fmt.Sprintf("the template expands to more than %d KB; an annotation or description is a few lines", e.max>>10)
}

// validate expands every template over sample data: alerts with and
// without groups, whose output is parsed as Prometheus parses alert
// annotations, and panels of every shape.
func (t *Text) validate() error {
	for _, name := range Names() {
		if !isAlert(name) {
			for _, data := range panelSamples() {
				if _, err := t.Panel(name, data); err != nil {
					return err
				}
			}
			continue
		}
		for _, data := range samples() {
			out, err := t.Alert(name, data)
			if err != nil {
				return err
			}
			if err := ParsePrometheus(PrometheusDefs + out); err != nil {
				return fmt.Errorf("%s:%s", t.paths[name], prometheusProblem(err))
			}
		}
	}
	return nil
}

// promError is a text/template parse error of Prometheus' expander.
var promError = regexp.MustCompile(`^template: [^:]*:(\d+):(?:\d+:)? *(.*)$`)

// prometheusProblem says where the expanded text fails to parse. Spec
// strings and inferslo's code hold no line break, so a line of the expanded
// text is a line of the template file.
func prometheusProblem(err error) string {
	m := promError.FindStringSubmatch(err.Error())
	if m == nil {
		return " the expanded text is not a valid Prometheus alert template: " + err.Error()
	}
	line, _ := strconv.Atoi(m[1])
	return fmt.Sprintf("%d: the expanded text is not a valid Prometheus alert template: %s", line, m[2])
}

// samples are alerts of each shape the rules produce: one group and many,
// one window pair and two.
func samples() []Alert {
	base := Alert{
		SLO: "chat-ttft", DisplayName: "Chat TTFT", Service: "chat", Objective: "99%", Window: "28d",
		SLI: "ttft", Threshold: "0.25s", SLOTier: "interactive",
		RunbookURL: "https://runbooks.example.com/chat",
		BurnTier:   "page", Severity: "critical",
		Windows:     []Window{{Factor: "14.4", Long: "1h", Short: "5m", BudgetShare: "2%"}},
		BudgetQuery: "printf `inferslo:error_budget_remaining:ratio{slo=\"chat-ttft\"}`",
		Buckets:     []string{`vllm:time_to_first_token_seconds_bucket{le="0.25"}`},
		Total:       `vllm:time_to_first_token_seconds_count`,
	}
	grouped := base
	grouped.GroupBy = []string{"model_name"}
	grouped.Group = ` for model_name={{ index $labels "model_name" }}`
	grouped.Windows = append(slices.Clone(base.Windows), Window{Factor: "6", Long: "6h", Short: "30m", BudgetShare: "5%"})
	grouped.BudgetQuery = "printf `inferslo:error_budget_remaining:ratio{slo=\"chat-ttft\",model_name=%q}` (index $labels \"model_name\")"
	return []Alert{base, grouped}
}

// panelSamples are a latency panel with SLO thresholds and without, and
// the data of a per-SLO panel.
func panelSamples() []Panel {
	slo := Panel{
		Service: "chat", SLO: "chat-ttft", SLI: "ttft ≤ 0.25s (vLLM)",
		Objective: "99%", ErrorBudget: "1%", ObjectiveRatio: "0.99", ErrorBudgetRatio: "0.01",
		Window: "28d", BaseWindow: "4m40s", Period: "calendar month", Zone: "UTC, boundaries at UTC+00:00",
		Tiers:     "page: burn > 14.4 over 56m and 4m40s (2% of the budget in 56m)",
		Metric:    "inferslo:sli_error:ratio",
		BurnAlert: "ErrorBudgetBurn", NoDataAlert: "SLIDataMissing",
		Role: "ttft", RoleTitle: "time to first token", Histogram: "vllm:time_to_first_token_seconds",
		Promises: []Promise{{SLO: "chat-ttft", Objective: "99%", Threshold: "0.25s", Window: "28d"}},
	}
	unbound := slo
	unbound.Promises = nil
	return []Panel{slo, unbound}
}

// PrometheusDefs are the variables Prometheus defines for alert templates.
const PrometheusDefs = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"

// ParsePrometheus parses text as Prometheus parses an alert template, with
// its functions.
func ParsePrometheus(text string) error {
	data := promtemplate.AlertTemplateData(map[string]string{}, map[string]string{}, "", promql.Sample{})
	return promtemplate.NewTemplateExpander(context.Background(), text, "__alerts", data, 0, nil, nil, nil).ParseTest()
}
