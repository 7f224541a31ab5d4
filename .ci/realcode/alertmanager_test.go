package realcode

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/config"
	"github.com/prometheus/alertmanager/eventrecorder"
	"github.com/prometheus/alertmanager/inhibit"
	"github.com/prometheus/alertmanager/provider/mem"
	"github.com/prometheus/alertmanager/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// alert is one alert as Prometheus would send it, and the group it
// belongs to ("" for an SLO without groups).
type alert struct {
	labels model.LabelSet
	group  string
}

// alertsOf returns one alert per alert rule of the rule files: the alert
// name, the rule's labels, and for a grouped SLO its group labels (those
// the rule's expression joins on besides slo) all set to group.
func alertsOf(t *testing.T, ruleFiles []string, group string) []alert {
	t.Helper()
	var out []alert
	for _, f := range ruleFiles {
		groups, errs := rulefmt.ParseFile(f, false, model.UTF8Validation)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f, errs)
		}
		for _, g := range groups.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				a := alert{labels: model.LabelSet{model.AlertNameLabel: model.LabelValue(r.Alert)}}
				for k, v := range r.Labels {
					a.labels[model.LabelName(k)] = model.LabelValue(v)
				}
				for _, name := range groupLabels(t, r.Expr) {
					a.labels[model.LabelName(name)] = model.LabelValue(group)
					a.group = group
				}
				out = append(out, a)
			}
		}
	}
	return out
}

// groupLabels are the labels an alert expression keeps besides slo: those
// its vector matchings join on.
func groupLabels(t *testing.T, expr string) []string {
	t.Helper()
	e, err := parser.ParseExpr(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	seen := map[string]bool{}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if b, ok := n.(*parser.BinaryExpr); ok && b.VectorMatching != nil && b.VectorMatching.On {
			for _, l := range b.VectorMatching.MatchingLabels {
				if l != "slo" {
					seen[l] = true
				}
			}
		}
		return nil
	})
	var out []string
	for l := range seen {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// inhibitor runs Alertmanager's inhibitor on the inhibit rules of file
// with the given alerts firing.
func inhibitor(t *testing.T, inhibitFile []byte, firing ...model.LabelSet) *inhibit.Inhibitor {
	t.Helper()
	// The generated file is the inhibit_rules part of a configuration.
	cfg, err := config.Load("route: {receiver: r}\nreceivers: [{name: r}]\n" + string(inhibitFile))
	if err != nil {
		t.Fatalf("alertmanager config: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	ctx, cancel := context.WithCancel(context.Background())
	alerts, err := mem.NewAlerts(ctx, time.Hour, 0, nil, logger, eventrecorder.NopRecorder(), prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, ls := range firing {
		a := &types.Alert{Alert: model.Alert{Labels: ls, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)}, UpdatedAt: now}
		if err := alerts.Put(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	ih := inhibit.NewInhibitor(alerts, cfg.InhibitRules, logger, eventrecorder.NopRecorder())
	go ih.Run()
	ih.WaitForLoading()
	t.Cleanup(func() {
		ih.Stop()
		alerts.Close()
		cancel()
	})
	return ih
}

// causes says whether a page is of a TTFT or TPOT SLO whose misses the
// other alert's goodput SLO, of the same service, adds: the page mutes it.
func causes(page, other model.LabelSet) bool {
	return (page["sli"] == "ttft" || page["sli"] == "tpot") && other["sli"] == "goodput" &&
		other["service"] == page["service"] && other["alertname"] == page["alertname"]
}

// inhibitionFaults fires each page alert (burn tiers page and outage) alone
// and lists every alert whose muting differs from "a page mutes the ticket
// of its own SLO and group, an outage tier the page and ticket of its own
// SLO and group, a TTFT or TPOT page the goodput SLO's alerts of its
// service and group, and nothing else".
func inhibitionFaults(t *testing.T, inhibitFile []byte, ruleFiles []string) (faults []string, pages, outages int) {
	t.Helper()
	// Two groups' worth of alerts: a page of group a must not mute b.
	all := append(alertsOf(t, ruleFiles, "a"), alertsOf(t, ruleFiles, "b")...)
	ctx := context.Background()
	for _, page := range all {
		tier := page.labels["burn_tier"]
		if (tier != "page" && tier != "outage") || page.group == "b" {
			continue
		}
		mutable := map[model.LabelValue]bool{"ticket": true}
		if tier == "outage" {
			mutable["page"] = true
			outages++
		} else {
			pages++
		}
		ih := inhibitor(t, inhibitFile, page.labels)
		for _, other := range all {
			want := (mutable[other.labels["burn_tier"]] && other.labels["alertname"] == page.labels["alertname"] &&
				other.labels["slo"] == page.labels["slo"] || causes(page.labels, other.labels)) && other.group == page.group
			if got := ih.Mutes(ctx, other.labels); got != want {
				faults = append(faults, fmt.Sprintf("page %v: mutes %v = %v, want %v", page.labels, other.labels, got, want))
			}
		}
	}
	return faults, pages, outages
}

func TestAlertmanagerInhibitorMutesOnlyAPagesOwnTicket(t *testing.T) {
	out := compiled(t)
	rules := files(t, out, "prometheus/*.rules.yaml")
	inhibitFile := read(t, filepath.Join(out, "alertmanager", "inhibit.yaml"))
	faults, pages, outages := inhibitionFaults(t, inhibitFile, rules)
	for _, f := range faults {
		t.Error(f)
	}
	if pages == 0 || outages == 0 {
		t.Fatalf("%d page and %d outage alerts in the rule files, want some of each", pages, outages)
	}
	t.Logf("alertmanager v0.34.0 inhibitor: %d page alerts each mute their own ticket, %d outage alerts their own page and ticket, and nothing else", pages, outages)
}

func TestAlertmanagerInhibitorCatchesABrokenInhibitRule(t *testing.T) {
	out := compiled(t)
	rules := files(t, out, "prometheus/*.rules.yaml")
	inhibitFile := read(t, filepath.Join(out, "alertmanager", "inhibit.yaml"))
	broken := map[string][]byte{
		// every ticket of the severity, configuration alerts included
		"a target matching the severity": mutate(t, inhibitFile, "      - alertname=\"ErrorBudgetBurn\"\n      - burn_tier=\"ticket\"", "      - severity=\"ticket\""),
		// every SLO's ticket
		"no equal labels": mutate(t, inhibitFile, "    equal:\n      - slo\n      - cluster\n      - env\n      - environment\n      - region\n", ""),
		// the outage tier muting only the ticket: a total outage pages twice
		"an outage rule that spares the page": mutate(t, inhibitFile, `burn_tier=~"page|ticket"`, `burn_tier="ticket"`),
		// a page muting the outage tier: the first page of an outage goes quiet
		"a page rule that mutes the outage tier": mutate(t, inhibitFile, "burn_tier=\"ticket\"\n", "burn_tier=~\"ticket|outage\"\n"),
	}
	for name, file := range broken {
		if faults, _, _ := inhibitionFaults(t, file, rules); len(faults) == 0 {
			t.Errorf("%s: no fault found", name)
		}
	}
}

// environmentFaults fires each page alert (burn tiers page and outage) of
// the rule files in one environment and lists every alert of another
// environment it mutes, and every alert of its own environment it should
// mute but does not. The environment is the value of label, as a spec's
// alerting labels or Prometheus' external labels set it.
func environmentFaults(t *testing.T, inhibitFile []byte, ruleFiles []string, label model.LabelName) (faults []string, pages int) {
	t.Helper()
	in := func(ls model.LabelSet, env model.LabelValue) model.LabelSet {
		c := ls.Clone()
		c[label] = env
		return c
	}
	all := alertsOf(t, ruleFiles, "a")
	ctx := context.Background()
	for _, page := range all {
		tier := page.labels["burn_tier"]
		if tier != "page" && tier != "outage" {
			continue
		}
		pages++
		ih := inhibitor(t, inhibitFile, in(page.labels, "staging"))
		for _, other := range all {
			own := other.labels["alertname"] == page.labels["alertname"] && other.labels["slo"] == page.labels["slo"] &&
				(other.labels["burn_tier"] == "ticket" || tier == "outage" && other.labels["burn_tier"] == "page") || causes(page.labels, other.labels)
			if ih.Mutes(ctx, in(other.labels, "production")) {
				faults = append(faults, fmt.Sprintf("%s=staging page %v mutes %v in production", label, page.labels, other.labels))
			}
			if got := ih.Mutes(ctx, in(other.labels, "staging")); got != own {
				faults = append(faults, fmt.Sprintf("%s=staging page %v: mutes %v in staging = %v, want %v", label, page.labels, other.labels, got, own))
			}
		}
	}
	return faults, pages
}

func TestAlertmanagerInhibitorNeverMutesAcrossEnvironmentsOrClusters(t *testing.T) {
	out := compiled(t, "--external-labels", "datacenter")
	rules := files(t, out, "prometheus/*.rules.yaml")
	inhibitFile := read(t, filepath.Join(out, "alertmanager", "inhibit.yaml"))
	// env and cluster are external labels the rules hold unasked (a spec's
	// alerting labels too); datacenter is given with --external-labels.
	for _, label := range []model.LabelName{"env", "cluster", "datacenter"} {
		faults, pages := environmentFaults(t, inhibitFile, rules, label)
		for _, f := range faults {
			t.Error(f)
		}
		if pages == 0 {
			t.Fatal("no page alerts in the rule files")
		}
		t.Logf("alertmanager v0.34.0 inhibitor: %d page alerts in %s=staging mute their own tickets in staging and nothing in production", pages, label)
	}
	// The inhibit rules of before, holding only the SLO equal: a staging
	// outage muted production's page and ticket.
	old := mutate(t, inhibitFile, "      - slo\n      - cluster\n      - datacenter\n      - env\n      - environment\n      - region\n", "      - slo\n")
	if faults, _ := environmentFaults(t, old, rules, "env"); len(faults) == 0 {
		t.Error("inhibit rules holding only the SLO equal: no fault found across environments")
	}
}
