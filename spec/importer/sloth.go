package importer

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "github.com/OpenSLO/go-sdk/pkg/openslo/v1"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

// slothPeriod is Sloth's default SLO period (its --default-slo-period).
const slothPeriod = 30 * 24 * time.Hour

// slothFile is a Sloth service spec or the spec of a PrometheusServiceLevel;
// the two spell keys differently (error_query, errorQuery), so each field
// is read through the key of its format.
type slothFile struct {
	Service    string            `yaml:"service"`
	Labels     map[string]string `yaml:"labels"`
	SLOs       []slothSLO        `yaml:"slos"`
	SLOPlugins any               `yaml:"slo_plugins"`
	SLOPlugCRD any               `yaml:"sloPlugins"`
}

type slothSLO struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Objective   string            `yaml:"objective"`
	Labels      map[string]string `yaml:"labels"`
	Plugins     any               `yaml:"plugins"`
	SLI         struct {
		Raw *struct {
			ErrorRatioQuery    string `yaml:"error_ratio_query"`
			ErrorRatioQueryCRD string `yaml:"errorRatioQuery"`
		} `yaml:"raw"`
		Events *struct {
			ErrorQuery    string `yaml:"error_query"`
			TotalQuery    string `yaml:"total_query"`
			ErrorQueryCRD string `yaml:"errorQuery"`
			TotalQueryCRD string `yaml:"totalQuery"`
		} `yaml:"events"`
		Plugin *struct {
			ID string `yaml:"id"`
		} `yaml:"plugin"`
	} `yaml:"sli"`
	Alerting struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
		Page        slothAlert        `yaml:"page_alert"`
		Ticket      slothAlert        `yaml:"ticket_alert"`
		PageCRD     slothAlert        `yaml:"pageAlert"`
		TicketCRD   slothAlert        `yaml:"ticketAlert"`
	} `yaml:"alerting"`
}

type slothAlert struct {
	Disable     bool              `yaml:"disable"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// or is the first non-empty of the two spellings.
func or[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// sloth converts a Sloth service spec (crd false) or PrometheusServiceLevel.
func sloth(d spec.Doc, crd bool) conversion {
	var c conversion
	key := func(snake string) string {
		if !crd {
			return snake
		}
		parts := strings.Split(snake, "_")
		for i := 1; i < len(parts); i++ {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
		return strings.Join(parts, "")
	}
	root := ""
	node := d.Node()
	if crd {
		root = "spec."
		node = nil
		for i := 0; i+1 < len(d.Node().Content); i += 2 {
			if d.Node().Content[i].Value == "spec" {
				node = d.Node().Content[i+1]
			}
		}
		if node == nil {
			c.fail(d.Errorf("spec", "required: the PrometheusServiceLevel's spec"))
			return c
		}
	}
	var f slothFile
	if err := node.Decode(&f); err != nil {
		c.fail(d.Errorf(strings.TrimSuffix(root, "."), "cannot read the Sloth spec: %v", err))
		return c
	}
	if f.SLOPlugins != nil || f.SLOPlugCRD != nil {
		c.fail(d.Warnf(root+key("slo_plugins"), "Sloth SLO plugins rewrite the generated rules and have no counterpart in inferslo; they are left out"))
	}
	if msg := spec.NameProblem(f.Service); msg != "" {
		c.fail(d.Errorf(root+"service", "%s", msg))
		return c
	}
	c.objects = append(c.objects, v1.NewService(v1.Metadata{Name: f.Service}, v1.ServiceSpec{}))
	for i, s := range f.SLOs {
		p := fmt.Sprintf("%sslos[%d]", root, i)
		slo, changes, problems := slothSLOOf(d, p, key, f, s)
		c.problems = append(c.problems, problems...)
		if slo == nil {
			continue
		}
		c.objects = append(c.objects, *slo)
		c.reports = append(c.reports, Report{SLO: slo.Metadata.Name, Changes: changes})
	}
	return c
}

// slothSLOOf converts one Sloth SLO, or returns nil with its problems.
func slothSLOOf(d spec.Doc, p string, key func(string) string, f slothFile, s slothSLO) (*v1.SLO, []string, spec.Problems) {
	var ps spec.Problems
	name := f.Service + "-" + s.Name // Sloth's SLO id
	var changes []string
	if spec.NameProblem(name) != "" && spec.NameProblem(s.Name) == "" {
		changes = append(changes, fmt.Sprintf("the SLO is named %s, as Sloth's id %s is no DNS label", s.Name, name))
		name = s.Name
	}
	if msg := spec.NameProblem(name); msg != "" {
		return nil, nil, spec.Problems{d.Errorf(p+".name", "the SLO's OpenSLO name %q (service-name, as Sloth's id): %s", name, msg)}
	}
	target, err := percentTarget(s.Objective)
	if err != nil {
		return nil, nil, spec.Problems{d.Errorf(p+".objective", "%v", err)}
	}
	if s.Plugins != nil {
		ps = append(ps, d.Warnf(p+".plugins", "Sloth SLO plugins rewrite the generated rules and have no counterpart in inferslo; they are left out"))
	}
	var ratio v1.SLIRatioMetric
	switch {
	case s.SLI.Plugin != nil:
		return nil, nil, append(ps, d.Errorf(p+".sli.plugin", "the SLI plugin %q is Go code that runs inside Sloth; write its error and total queries as sli.%s instead", s.SLI.Plugin.ID, key("events")))
	case s.SLI.Events != nil:
		ev := s.SLI.Events
		bad, badRated, err := spec.RateForm(or(ev.ErrorQuery, ev.ErrorQueryCRD))
		if err != nil {
			return nil, nil, append(ps, d.Errorf(p+".sli.events."+key("error_query"), "%v", err))
		}
		total, totalRated, err := spec.RateForm(or(ev.TotalQuery, ev.TotalQueryCRD))
		if err != nil {
			return nil, nil, append(ps, d.Errorf(p+".sli.events."+key("total_query"), "%v", err))
		}
		if !badRated || !totalRated {
			return nil, nil, append(ps, d.Errorf(p+".sli.events", "the error and total queries must read rates over {{.window}}, as Sloth requires; inferslo reads them over each window it needs"))
		}
		ratio = v1.SLIRatioMetric{Counter: true, Bad: promSource(bad), Total: promSource(total)}
		changes = append(changes, "the SLI over the 30d period divides event counts (busy hours weigh more); Sloth's period SLI averages 5m error ratios (every 5 minutes weighs the same)")
	case s.SLI.Raw != nil:
		q := or(s.SLI.Raw.ErrorRatioQuery, s.SLI.Raw.ErrorRatioQueryCRD)
		if templateFree := strings.ReplaceAll(q, "{{.window}}", "5m"); strings.Contains(templateFree, "{{") {
			_, _, err := spec.RateForm(q)
			return nil, nil, append(ps, d.Errorf(p+".sli.raw."+key("error_ratio_query"), "%v", err))
		} else {
			q = templateFree
		}
		ratio = v1.SLIRatioMetric{RawType: v1.SLIRawMetricTypeFailure, Raw: promSource(q)}
		changes = append(changes, "the raw error ratio is read over 5m and averaged over every longer window (each 5 minutes weighs the same), where Sloth reads it over each alert window directly")
	default:
		return nil, nil, append(ps, d.Errorf(p+".sli", "required: events (error and total queries) or raw (an error ratio query)"))
	}
	var ext spec.Extensions
	alerting := s.Alerting
	page, ticket := or2(alerting.Page, alerting.PageCRD), or2(alerting.Ticket, alerting.TicketCRD)
	labels := map[string]string{}
	for _, m := range []map[string]string{f.Labels, s.Labels, alerting.Labels} {
		maps.Copy(labels, m)
	}
	if len(labels) > 0 {
		ext.AlertLabels = labels
		changes = append(changes, "Sloth's labels ("+strings.Join(slices.Sorted(maps.Keys(labels)), ", ")+") are put on every alert (inferslo.dev/alert-labels), not on the recording rules")
	}
	severities := map[string]string{}
	for _, t := range []struct {
		tier, name string
		a          slothAlert
	}{{model.PageTier, "page_alert", page}, {model.TicketTier, "ticket_alert", ticket}} {
		// A tier's severity label is inferslo's severity name for the tier.
		if sev := t.a.Labels["severity"]; sev != "" {
			severities[t.tier] = sev
		}
		others := len(t.a.Labels)
		if sev := t.a.Labels["severity"]; sev != "" {
			others--
		}
		if others > 0 || len(t.a.Annotations) > 0 {
			ps = append(ps, d.Warnf(p+".alerting."+key(t.name), "labels other than severity and annotations of one alert tier have no counterpart in inferslo; they are left out"))
		}
	}
	if len(severities) > 0 {
		ext.Severities = severities
		changes = append(changes, "Sloth's tier severity labels are kept (inferslo.dev/severities)")
	}
	if alerting.Name != "" || len(alerting.Annotations) > 0 {
		changes = append(changes, "inferslo names its alerts and writes their annotations itself; Sloth's alert name and annotations are not carried over")
	}
	var sevs []string
	if !page.Disable {
		sevs = append(sevs, model.PageTier)
	}
	if !ticket.Disable {
		sevs = append(sevs, model.TicketTier)
	}
	if len(sevs) == 0 {
		off := false
		ext.BurnAlerts = &off
		return slothObject(name, f, s, target, ratio, ext, nil), changes, ps
	}
	tiers, err := model.WorkbookTiersOf(sevs, slothPeriod, minRate, spec.DefaultEvaluation)
	if err != nil {
		return nil, nil, append(ps, d.Errorf(p+".alerting", "%v", err))
	}
	policies, more, err := tierPolicies(name, tiers, target)
	if err != nil {
		return nil, nil, append(ps, d.Errorf(p+".alerting", "%v", err))
	}
	if len(sevs) == 2 && len(more) == 0 {
		// inferslo's default tiers are these very pairs.
		policies = nil
	}
	changes = append(changes, slothForChange(tiers))
	changes = append(changes, more...)
	return slothObject(name, f, s, target, ratio, ext, policies), changes, ps
}

// slothForChange names the one difference of the burn alerts: Sloth's
// pairs are the SRE workbook's for 30d, as inferslo's defaults are, but
// Sloth's alerts have no `for`.
func slothForChange(tiers []model.Tier) string {
	var pairs, fors []string
	for _, t := range tiers {
		for _, p := range t.Windows {
			pairs = append(pairs, fmt.Sprintf("%s %sx %s/%s", t.Severity, p.Factor, model.FormatDuration(p.Long), model.FormatDuration(p.Short)))
		}
		fors = append(fors, fmt.Sprintf("%s %s", t.Severity, model.FormatDuration(t.For)))
	}
	return "the burn alerts use Sloth's windows and factors (the SRE workbook's: " + strings.Join(pairs, ", ") + "), but fire after inferslo's `for` (" + strings.Join(fors, ", ") + ") where Sloth's fire on the first evaluation that meets both windows"
}

func slothObject(name string, f slothFile, s slothSLO, target float64, ratio v1.SLIRatioMetric, ext spec.Extensions, policies []v1.SLOAlertPolicy) *v1.SLO {
	w, _ := window(slothPeriod) // 30d is an OpenSLO duration
	slo := importedSLO(name, s.Description, f.Service, ratio, w, target, ext, policies)
	return &slo
}

func or2(a, b slothAlert) slothAlert {
	if a.Disable || len(a.Labels) > 0 || len(a.Annotations) > 0 {
		return a
	}
	return b
}
