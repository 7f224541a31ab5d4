// Package grafana builds Grafana dashboards from the SLO model: one per
// service, with latency percentiles against the SLO threshold, error ratio,
// error budget, burn rate against the alert tiers, firing alerts and engine
// saturation, plus one overview of every SLO. Output is Grafana's classic
// dashboard JSON (schemaVersion 42), checked in memory before it is returned.
package grafana

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/templates"
)

// SchemaVersion is the classic dashboard model version emitted.
const SchemaVersion = 42

// OverviewPath is where the dashboard listing every SLO is written.
const OverviewPath = "grafana/overview.json"

// overviewUID cannot collide with a service uid: service names are DNS labels
// and never start with a dash.
const overviewUID = "inferslo--overview"

// maxUID is Grafana's limit on dashboard uids.
const maxUID = 40

// Builder builds the dashboards of one compilation: service by service,
// then the overview. It parses each query shape once across services.
type Builder struct {
	// ExternalLabels are the labels each Prometheus adds to what a global
	// view (Thanos Query, Mimir, a federating Prometheus) reads, such as
	// cluster: every panel splits and joins by them, as by a group label.
	ExternalLabels []string

	text    *templates.Text
	queries *queries
	pairs   pairTexts
	// One compact encoder and buffer serve every dashboard; indent lays
	// the bytes out in out, and each file gets a copy of its length.
	buf bytes.Buffer
	enc *json.Encoder
	out []byte
}

// NewBuilder returns a Builder wording panel descriptions by text, or by
// the built-in templates when text is nil.
func NewBuilder(text *templates.Text) (*Builder, error) {
	text, err := templates.OrDefault(text)
	if err != nil {
		return nil, err
	}
	b := &Builder{text: text, queries: newQueries(), pairs: pairTexts{}}
	b.enc = json.NewEncoder(&b.buf)
	b.enc.SetEscapeHTML(false)
	return b, nil
}

// ServiceDashboards is the backend of the per-service dashboards.
type ServiceDashboards struct{ *Builder }

// Name says what the backend builds.
func (ServiceDashboards) Name() string { return "grafana dashboards" }

// PerService: a service's dashboard shows its own SLOs.
func (ServiceDashboards) PerService() bool { return true }

// Build returns the dashboards of Services.
func (d ServiceDashboards) Build(set model.Set) (artifact.Set, error) { return d.Services(set) }

// OverviewDashboard is the backend of the dashboard of every SLO.
type OverviewDashboard struct{ *Builder }

// Name says what the backend builds.
func (OverviewDashboard) Name() string { return "grafana overview" }

// PerService: the overview lists every SLO.
func (OverviewDashboard) PerService() bool { return false }

// Build returns the dashboard of Overview.
func (d OverviewDashboard) Build(set model.Set) (artifact.Set, error) { return d.Overview(set) }

// Services returns grafana/<service>.json for every service of the set,
// each checked.
func (b *Builder) Services(set model.Set) (artifact.Set, error) {
	sorted := model.Set{SLOs: b.global(set.SLOs)}
	sorted.Sort()
	var out artifact.Set
	for _, service := range sorted.PerService() {
		if err := checkServiceName(service.Name); err != nil {
			return nil, err
		}
		d, err := serviceDashboard(service.Name, service.SLOs, &words{text: b.text, service: service.Name, pairs: b.pairs}, b.queries)
		if err != nil {
			return nil, fmt.Errorf("dashboard of service %s: %w", service.Name, err)
		}
		f, err := b.encode(ServicePath(service.Name), d)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// global returns copies of the SLOs as a global view reads their series:
// split by the external labels too, after their own groups.
func (b *Builder) global(slos []model.SLO) []model.SLO {
	out := append([]model.SLO{}, slos...)
	if len(b.ExternalLabels) == 0 {
		return out
	}
	for i := range out {
		groups := slices.Clone(out[i].GroupBy)
		for _, l := range b.ExternalLabels {
			if !slices.Contains(groups, l) {
				groups = append(groups, l)
			}
		}
		out[i].GroupBy = groups
	}
	return out
}

// Overview returns grafana/overview.json listing every SLO of the set,
// checked; an empty set yields no file.
func (b *Builder) Overview(set model.Set) (artifact.Set, error) {
	if len(set.SLOs) == 0 {
		return nil, nil
	}
	sorted := model.Set{SLOs: b.global(set.SLOs)}
	sorted.Sort()
	d, err := overviewDashboard(sorted, &words{text: b.text, pairs: b.pairs}, b.ExternalLabels)
	if err != nil {
		return nil, fmt.Errorf("overview dashboard: %w", err)
	}
	f, err := b.encode(OverviewPath, d)
	if err != nil {
		return nil, err
	}
	return artifact.Set{f}, nil
}

// ServicePath is where a service's dashboard is written.
func ServicePath(service string) string { return "grafana/" + service + ".json" }

// UID is the dashboard uid of a service: "inferslo-" and the name, or, when
// that exceeds Grafana's 40 characters, a prefix of it and a hash of the whole
// name, so long names stay distinct and stable.
func UID(service string) string {
	uid := "inferslo-" + service
	if len(uid) <= maxUID {
		return uid
	}
	sum := sha256.Sum256([]byte(service))
	h := hex.EncodeToString(sum[:])[:10]
	return uid[:maxUID-len(h)-1] + "-" + h
}

func checkServiceName(service string) error {
	if ServicePath(service) == OverviewPath {
		return fmt.Errorf("service name %q is taken by the overview dashboard (%s); rename the service", service, OverviewPath)
	}
	for i, r := range service {
		ok := r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok || (i == 0 && (r == '-' || r == '.')) {
			return fmt.Errorf("service name %q cannot name a dashboard file: use letters, digits, '-', '_' and '.'", service)
		}
	}
	if service == "" {
		return fmt.Errorf("an SLO has no service name")
	}
	return nil
}

// encode checks a dashboard and prints it as indented JSON. HTML escaping
// is off so PromQL comparisons and markdown stay readable in diffs.
func (b *Builder) encode(path string, d dashboard) (artifact.File, error) {
	if err := b.queries.check(d); err != nil {
		return artifact.File{}, fmt.Errorf("%s: %w", path, err)
	}
	b.buf.Reset()
	if err := b.enc.Encode(d); err != nil {
		return artifact.File{}, fmt.Errorf("encode %s: %w", path, err)
	}
	b.out = indent(b.out[:0], b.buf.Bytes())
	return artifact.File{Path: path, Data: bytes.Clone(b.out)}, nil
}

// newDashboard holds what every dashboard shares.
func newDashboard(uid, title string, tags []string, slos []model.SLO) dashboard {
	return dashboard{
		UID:           uid,
		Title:         title,
		Description:   generatedHeader(slos),
		Tags:          tags,
		Timezone:      "browser",
		Editable:      false, // generated: edits belong in the spec
		GraphTooltip:  1,     // shared crosshair, to line up latency, queue and burn
		Time:          timeRange{From: "now-24h", To: "now"},
		Refresh:       "1m",
		SchemaVersion: SchemaVersion,
		Links: []link{{
			Title:      "SLO dashboards",
			Type:       "dashboards",
			Icon:       "external link",
			Tooltip:    "Every dashboard generated by inferslo",
			Tags:       []string{"inferslo"},
			AsDropdown: true,
			KeepTime:   true,
		}},
		Templating: templating{List: []variable{{
			Type:    "datasource",
			Name:    "datasource",
			Label:   "Data source",
			Query:   "prometheus",
			Refresh: 1,
		}}},
		Annotations: annotations{List: []annotation{{
			Name:       "Annotations & Alerts",
			Datasource: datasourceRef{Type: "grafana", UID: "-- Grafana --"},
			Enable:     true,
			Hide:       true,
			IconColor:  "rgba(0, 211, 255, 1)",
			BuiltIn:    1,
			Type:       "dashboard",
		}}},
	}
}

// words expands the description templates of one dashboard. The first
// failure is kept, and the dashboard returns it once built, so panel
// builders stay plain functions of the model.
type words struct {
	text *templates.Text
	// service is the dashboard's service; empty for the overview.
	service string
	// pairs is the builder's memory of the alert tiers' sentences.
	pairs pairTexts
	err   error
}

func (w *words) say(name string, data templates.Panel) string {
	data.Service = w.service
	s, err := w.text.Panel(name, data)
	if err != nil && w.err == nil {
		w.err = err
	}
	return s
}

// maintenanceAnnotation shades the planned maintenance windows of the SLOs
// the matcher selects: Grafana draws consecutive non-zero points of an
// annotation query as one region.
func maintenanceAnnotation(matcher string) annotation {
	return annotation{
		Name:        "Planned maintenance",
		Datasource:  promDS(),
		Enable:      true,
		IconColor:   "blue",
		Expr:        fmt.Sprintf("max by (%s) (%s{%s}) > 0", model.LabelSLO, model.MaintenanceActive, matcher),
		Step:        "1m",
		TitleFormat: "Planned maintenance",
		TextFormat:  "{{slo}}: events left out of the SLI, the budget and the burn alerts",
		TagKeys:     "slo",
	}
}

// hasMaintenance says whether an SLO has planned maintenance windows.
func hasMaintenance(slos []model.SLO) bool {
	for _, s := range slos {
		if len(s.Alerting.Maintenance) > 0 {
			return true
		}
	}
	return false
}

// alertAnnotation marks when SLO alerts fire, on every time-series panel,
// naming the group of a grouped SLO.
func alertAnnotation(matcher string, groups []string) annotation {
	return annotation{
		Name:        "SLO alerts firing",
		Datasource:  promDS(),
		Enable:      true,
		IconColor:   "red",
		Expr:        alertsQuery(matcher, groups),
		Step:        "1m",
		TitleFormat: "{{alertname}} {{severity}}",
		TextFormat:  "{{slo}}" + groupLegend(groups),
		TagKeys:     "slo,severity",
	}
}
