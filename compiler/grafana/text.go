package grafana

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/templates"
)

func dur(d time.Duration) string { return model.FormatDuration(d) }

// percent prints a share exactly when it has at most two decimals as a
// percentage, else rounded to three significant digits and marked "≈"
// (budget shares like 14.4 × 1h / 28d do not terminate).
func percent(d model.Decimal) string {
	p := d.Mul(model.NewDecimal(100, 1))
	// At most two decimals print exactly.
	if s := p.String(); !strings.Contains(s, ".") || len(s)-strings.IndexByte(s, '.') <= 3 {
		return s + "%"
	}
	return fmt.Sprintf("≈%.3g%%", p.Float())
}

// roleTitle names an inference SLI role for people.
func roleTitle(role string) string {
	switch role {
	case "ttft":
		return "Time to first token"
	case "itl":
		return "Inter-token latency"
	case "tpot":
		return "Time per output token"
	case "e2e":
		return "End-to-end request latency"
	case "queue":
		return "Queue time"
	case "errors":
		return "Request errors"
	case "incomplete":
		return "Incomplete responses"
	case "rejections":
		return "Admission rejections"
	case "streams":
		return "Incomplete streams"
	case "goodput":
		return "Goodput lower bound"
	}
	return role
}

// engineTitle names an SLO's engine: its title, else its catalog id.
func engineTitle(inf *model.Inference) string {
	if inf.EngineTitle != "" {
		return inf.EngineTitle
	}
	return inf.Engine
}

// sliText describes an SLO's indicator in a few words.
func sliText(slo model.SLO) string {
	if inf := slo.Inference; inf != nil {
		engine := engineTitle(inf)
		if inf.Threshold.IsZero() {
			return fmt.Sprintf("%s (%s)", strings.ToLower(roleTitle(inf.Role)), engine)
		}
		return fmt.Sprintf("%s ≤ %ss (%s)", inf.Role, inf.Threshold.String(), engine)
	}
	switch {
	case slo.SLI.Good != nil:
		return "good / total events"
	case slo.SLI.Bad != nil:
		return "bad / total events"
	case slo.SLI.RawType != "":
		return "raw " + slo.SLI.RawType + " ratio"
	}
	return model.SLIName(slo)
}

// tiersText spells out each alert tier and its budget math, each window
// pair as said remembers it.
func tiersText(slo model.SLO, said pairTexts) string {
	if len(slo.Alerting.Tiers) == 0 {
		return "no burn-rate alerts"
	}
	var tiers []string
	for _, t := range slo.Alerting.Tiers {
		var pairs []string
		for _, p := range t.Windows {
			pairs = append(pairs, said.text(p, slo.Window))
		}
		tiers = append(tiers, t.Severity+": "+strings.Join(pairs, ", or "))
	}
	return strings.Join(tiers, "; ")
}

// pairTexts remembers what tiersText says of a window pair in an SLO
// window: a fleet's SLOs share a few alert tiers, and the budget share is
// exact rational arithmetic, costlier than the lookup. Equal keys hold equal
// values (a Decimal equals another only with the same digits, or the same
// big number). A nil pairTexts remembers nothing.
type pairTexts map[pairInWindow]string

type pairInWindow struct {
	pair   model.WindowPair
	window time.Duration
}

func (m pairTexts) text(p model.WindowPair, window time.Duration) string {
	k := pairInWindow{p, window}
	if s, ok := m[k]; ok {
		return s
	}
	s := fmt.Sprintf("burn > %s over %s and %s (%s of the budget in %s)",
		p.Factor.String(), dur(p.Long), dur(p.Short), percent(p.BudgetFraction(window)), dur(p.Long))
	if m != nil {
		m[k] = s
	}
	return s
}

// sloTable is a markdown table of SLOs, for the text panels.
func sloTable(slos []model.SLO, withService bool, said pairTexts) string {
	cols := []string{"SLO", "SLI", "Objective", "Window", "Error budget", "Alert tiers"}
	// A tier column only where some SLO names its tier, so tables of
	// specs without tiers stay as they were.
	tiered := slices.ContainsFunc(slos, func(s model.SLO) bool { return s.SLOTier != "" })
	if tiered {
		cols = slices.Insert(cols, 2, "Tier")
	}
	if withService {
		cols = append([]string{"Service"}, cols...)
	}
	var b strings.Builder
	b.WriteString("| " + strings.Join(cols, " | ") + " |\n|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, s := range slos {
		cells := []string{s.Name, sliText(s), percent(s.Objective), s.WindowText(), percent(s.ErrorBudget()), tiersText(s, said)}
		if tiered {
			cells = slices.Insert(cells, 2, cmp.Or(s.SLOTier, model.SLOTierInteractive))
		}
		if withService {
			cells = append([]string{s.Service.Name}, cells...)
		}
		for i := range cells {
			cells[i] = mdCell(cells[i])
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// sloData is what the description of a panel about one SLO may say; the
// panel reads metric.
func (w *words) sloData(slo model.SLO, metric string) templates.Panel {
	d := templates.Panel{
		SLO: slo.Name, SLI: sliText(slo),
		Objective: percent(slo.Objective), ErrorBudget: percent(slo.ErrorBudget()),
		ObjectiveRatio: slo.Objective.String(), ErrorBudgetRatio: slo.ErrorBudget().String(),
		Window: dur(slo.Window), BaseWindow: dur(slo.BaseWindow()),
		Tiers: tiersText(slo, w.pairs), Metric: metric,
	}
	if c := slo.Calendar; c != nil {
		d.Period, d.Zone = c.Name(), zoneText(*c)
	}
	return d
}

// generatedHeader says where a dashboard came from. JSON has no comments, so
// it is the dashboard's description and opens its first panel.
func generatedHeader(slos []model.SLO) string {
	src := "the SLO specs"
	if s := model.Sources(slos); len(s) > 0 {
		src = strings.Join(s, ", ")
	}
	return fmt.Sprintf("Code generated by inferslo from %s. DO NOT EDIT: change the spec and run inferslo compile.", src)
}

func sloTitle(slo model.SLO) string {
	if slo.DisplayName != "" && slo.DisplayName != slo.Name {
		return fmt.Sprintf("%s (%s)", slo.DisplayName, slo.Name)
	}
	return slo.Name
}
