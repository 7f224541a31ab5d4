package render

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
)

// Options tune a page drawn by drawAll.
type Options struct {
	// Title heads the page; "inferslo review" when empty.
	Title string
	// Scenario says what the data shows ("a healthy day, then a fast burn").
	Scenario string
	// Alerts are the firing intervals drawn as bands; when nil, read
	// from the data of each dashboard's ALERTS queries.
	Alerts []Alert
}

// drawAll draws every dashboard of files over data in one go, the page a
// streamed Review gives. Tests read the alerts' bands from the ALERTS
// queries' data when opts.Alerts is nil.
func drawAll(set model.Set, files artifact.Set, data map[string][]Series, opts Options) ([]byte, error) {
	r, err := NewReview(set, files, opts.Title)
	if err != nil {
		return nil, err
	}
	alerts := opts.Alerts
	if alerts == nil {
		alerts = alertsFromData(r.ds, data)
	}
	for _, d := range r.ds {
		r.Draw(d.service, data, alerts)
	}
	return r.Page(opts.Scenario), nil
}

// alertsFromData reads firing intervals from the ALERTS queries' results:
// a run of samples above zero is one interval, closed at the next sample.
func alertsFromData(ds []dashboard, data map[string][]Series) []Alert {
	seen := map[string]bool{}
	var out []Alert
	for _, d := range ds {
		for _, p := range d.Panels {
			for _, t := range p.Targets {
				if !strings.Contains(t.Expr, "ALERTS{") || seen[t.Expr] {
					continue
				}
				seen[t.Expr] = true
				for _, s := range data[t.Expr] {
					out = append(out, intervals(s, d.service)...)
				}
			}
		}
	}
	// One alert can show on several dashboards' queries: keep it once.
	sort.SliceStable(out, func(i, j int) bool { return alertKey(out[i]) < alertKey(out[j]) })
	var uniq []Alert
	for i, a := range out {
		if i == 0 || alertKey(a) != alertKey(out[i-1]) {
			uniq = append(uniq, a)
		}
	}
	return uniq
}

func alertKey(a Alert) string {
	return fmt.Sprintf("%s|%s|%s|%s|%020d", a.SLO, a.Group, a.Name, a.Severity, a.From.UnixNano())
}

func intervals(s Series, service string) []Alert {
	var out []Alert
	var cur *Alert
	for i, p := range s.Points {
		firing := p.Value > 0 && !math.IsNaN(p.Value)
		switch {
		case firing && cur == nil:
			cur = &Alert{Name: s.Labels["alertname"], Severity: s.Labels["severity"], SLO: s.Labels["slo"], Service: s.Labels["service"], Group: groupOf(s.Labels), From: p.Time}
			if cur.Service == "" {
				cur.Service = service
			}
		case !firing && cur != nil:
			cur.To = p.Time
			out = append(out, *cur)
			cur = nil
		}
		if cur != nil && i == len(s.Points)-1 {
			cur.To = p.Time
			out = append(out, *cur)
		}
	}
	return out
}

// groupOf names the group of an ALERTS series by its labels other than
// the alert's own (`model_name="vllm-a"`): the dashboards' alert queries
// keep only the grouping labels beside those.
func groupOf(ls map[string]string) string {
	var parts []string
	for k, v := range ls {
		switch k {
		case "alertname", "severity", "slo", "service", "alertstate":
		default:
			parts = append(parts, k+"="+strconv.Quote(v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
