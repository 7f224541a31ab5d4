// Package alertmanager writes the Alertmanager side of the generated
// alerts: an inhibit-rule snippet that mutes the ticket of a burn while its
// page fires, and the page and ticket while its outage tier fires, checked
// with Alertmanager's own configuration loader.
package alertmanager

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"

	amconfig "github.com/prometheus/alertmanager/config"
	"gopkg.in/yaml.v3"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
)

// Path is where the snippet goes in the output folder.
const Path = "alertmanager/inhibit.yaml"

// Snippet is the part of an Alertmanager configuration inferslo writes.
type Snippet struct {
	InhibitRules []InhibitRule `yaml:"inhibit_rules"`
}

// InhibitRule mutes alerts matching the target while one matching the
// source fires with the same values of the equal labels.
type InhibitRule struct {
	SourceMatchers []string `yaml:"source_matchers"`
	TargetMatchers []string `yaml:"target_matchers"`
	Equal          []string `yaml:"equal"`
}

// Backend is the inhibit-rule backend of a compilation.
type Backend struct {
	// ExternalLabels are the names of the labels Prometheus adds to every
	// alert it sends (its external_labels, such as cluster or env); they
	// tell apart environments and clusters sharing one Alertmanager.
	ExternalLabels []string
}

// Name says what the backend builds.
func (Backend) Name() string { return "alertmanager inhibit rules" }

// PerService: one rule covers every SLO.
func (Backend) PerService() bool { return false }

// equalLabels are the labels a source and target alert must share for the
// one to mute the other: the SLO, its groups, every label the spec puts on
// its alerts (alerting.labels, the same on page and ticket), and the
// external labels, given and common (cluster, env, environment, region:
// a label no alert carries is equal, empty, on both sides, so holding it
// never stops an inhibition within one environment, and a staging page
// never mutes production's ticket). A severity label never: it differs
// between the tiers.
func equalLabels(slos []model.SLO, external []string) []string {
	seen := map[string]bool{model.LabelSLO: true}
	var rest []string
	add := func(l string) {
		if !seen[l] && l != model.LabelSeverity && l != model.LabelBurnTier && l != "alertname" {
			seen[l] = true
			rest = append(rest, l)
		}
	}
	for _, slo := range slos {
		for _, l := range slo.GroupBy {
			add(l)
		}
		for l := range slo.Alerting.Labels {
			add(l)
		}
	}
	for _, l := range append([]string{"cluster", "env", "environment", "region"}, external...) {
		add(l)
	}
	slices.Sort(rest)
	return append([]string{model.LabelSLO}, rest...)
}

// Build returns the inhibit snippet when some SLO has a page tier and
// either a ticket or an outage tier; nothing otherwise.
func (b Backend) Build(set model.Set) (artifact.Set, error) {
	goodputs := goodputSources(set)
	var slos []model.SLO
	var tickets, outages bool
	for _, slo := range set.SLOs {
		ticket := hasTiers(slo, model.PageTier, model.TicketTier)
		outage := slo.Alerting.Outage != nil && hasTiers(slo, model.PageTier)
		if !ticket && !outage {
			continue
		}
		tickets, outages = tickets || ticket, outages || outage
		slos = append(slos, slo)
	}
	if len(slos) == 0 && len(goodputs) == 0 {
		return nil, nil
	}
	equal := equalLabels(slos, b.ExternalLabels)
	burn := fmt.Sprintf("%s=%q", "alertname", model.AlertBurn)
	tier := func(t string) string { return fmt.Sprintf("%s=%q", model.LabelBurnTier, t) }
	var s Snippet
	var says []string
	if tickets {
		s.InhibitRules = append(s.InhibitRules, InhibitRule{
			SourceMatchers: []string{burn, tier(model.PageTier)},
			TargetMatchers: []string{burn, tier(model.TicketTier)},
			// A missing label counts as equal, so SLOs without groups match too.
			Equal: equal,
		})
		says = append(says, "# - while a burn pages, the ticket of the same SLO (and group, environment and cluster) stays quiet\n")
	}
	if outages {
		// A total outage also burns past the 14.4x and 6x factors: one
		// incident, one page. The ticket goes quiet too, in case the
		// outage tier fires before the page that would mute it.
		s.InhibitRules = append(s.InhibitRules, InhibitRule{
			SourceMatchers: []string{burn, tier(model.OutageTier)},
			TargetMatchers: []string{burn, fmt.Sprintf("%s=~%q", model.LabelBurnTier, "page|ticket")},
			Equal:          equal,
		})
		says = append(says, "# - while the outage tier pages, the burn's page and ticket of the same SLO (and group, environment and cluster) stay quiet\n")
	}
	for _, g := range goodputs {
		// Goodput's lower bound adds the misses of its TTFT and TPOT SLOs:
		// either burning burns it too. One incident, one page: the cause's.
		s.InhibitRules = append(s.InhibitRules, InhibitRule{
			SourceMatchers: []string{burn, fmt.Sprintf("%s=~%q", model.LabelBurnTier, model.PageTier+"|"+model.OutageTier),
				fmt.Sprintf("%s=~%q", model.LabelSLO, regexp.QuoteMeta(g.pair.TTFT.Name)+"|"+regexp.QuoteMeta(g.pair.TPOT.Name))},
			TargetMatchers: []string{burn, fmt.Sprintf("%s=%q", model.LabelSLO, g.goodput.Name)},
			Equal:          equal[1:],
		})
		if !slices.ContainsFunc(slos, func(o model.SLO) bool { return o.Name == g.goodput.Name }) {
			slos = append(slos, g.goodput)
		}
	}
	if len(goodputs) > 0 {
		says = append(says, "# - while a TTFT or TPOT SLO pages, the burn alerts of the goodput SLO whose bound adds its misses (same group, environment and cluster) stay quiet\n")
	}
	var buf bytes.Buffer
	buf.WriteString(artifact.YAMLHeader(model.Sources(slos)))
	buf.WriteString("# Add to the inhibit_rules of your Alertmanager configuration:\n")
	for _, line := range says {
		buf.WriteString(line)
	}
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encode inhibit rules: %w", err)
	}
	if err := Check(buf.Bytes()); err != nil {
		return nil, err
	}
	return artifact.Set{{Path: Path, Data: buf.Bytes()}}, nil
}

// Check loads a snippet into a minimal Alertmanager configuration the way
// Alertmanager loads its own.
func Check(snippet []byte) error {
	const base = "route: {receiver: inferslo}\nreceivers: [{name: inferslo}]\n"
	if _, err := amconfig.Load(base + string(snippet)); err != nil {
		return fmt.Errorf("the inhibit rules do not load in Alertmanager: %w", err)
	}
	return nil
}

// goodputOf is a goodput SLO and the TTFT and TPOT SLOs its bound reads.
type goodputOf struct {
	goodput model.SLO
	pair    model.GoodputPair
}

// goodputSources pairs each goodput SLO with a page tier to the TTFT and
// TPOT SLOs of its service, selector and groups.
func goodputSources(set model.Set) []goodputOf {
	var out []goodputOf
	for _, service := range set.PerService() {
		pairs := model.GoodputPairs(service.SLOs)
		for _, g := range service.SLOs {
			if g.Inference == nil || g.Inference.Role != model.SLIGoodput || !hasTiers(g, model.PageTier) {
				continue
			}
			for _, p := range pairs {
				if p.TTFT.Inference.Selector == g.Inference.Selector && slices.Equal(p.TTFT.GroupBy, g.GroupBy) {
					out = append(out, goodputOf{goodput: g, pair: p})
					break
				}
			}
		}
	}
	return out
}

func hasTiers(slo model.SLO, tiers ...string) bool {
	for _, want := range tiers {
		if !slices.ContainsFunc(slo.Alerting.Tiers, func(t model.Tier) bool { return t.Severity == want }) {
			return false
		}
	}
	return true
}
