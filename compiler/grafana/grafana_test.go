package grafana

import (
	"bytes"
	"encoding/json"
	"flag"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/internal/golden"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func build(t testing.TB, set model.Set) map[string][]byte {
	t.Helper()
	files, err := dashboards(set)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		out[f.Path] = f.Data
	}
	return out
}

func decode(t testing.TB, data []byte) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// dataPanels returns every panel that is not a row.
func dataPanels(d map[string]any) []map[string]any {
	var out []map[string]any
	for _, p := range d["panels"].([]any) {
		if pm := p.(map[string]any); pm["type"] != "row" {
			out = append(out, pm)
		}
	}
	return out
}

// panelTitled finds the panels whose title starts with prefix.
func panelsTitled(d map[string]any, prefix string) []map[string]any {
	var out []map[string]any
	for _, p := range dataPanels(d) {
		if strings.HasPrefix(p["title"].(string), prefix) {
			out = append(out, p)
		}
	}
	return out
}

func exprs(p map[string]any) []string {
	var out []string
	ts, _ := p["targets"].([]any)
	for _, tg := range ts {
		out = append(out, tg.(map[string]any)["expr"].(string))
	}
	return out
}

// thresholdValues lists the non-base threshold steps of a panel as text.
func thresholdValues(p map[string]any) []string {
	var out []string
	th, _ := lookup(p, "fieldConfig", "defaults", "thresholds").(map[string]any)
	if th == nil {
		return nil
	}
	for _, s := range th["steps"].([]any) {
		if v := s.(map[string]any)["value"]; v != nil {
			out = append(out, jsonText(v))
		}
	}
	return out
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// expandMacros replaces Grafana's interval macros by a duration, the way
// Grafana does before it sends a query.
func expandMacros(expr string) string {
	return strings.NewReplacer("$__rate_interval", "1m", "$__interval", "30s", "$__range", "6h").Replace(expr)
}

func allQueries(t testing.TB, d map[string]any) []string {
	var out []string
	for _, p := range dataPanels(d) {
		out = append(out, exprs(p)...)
	}
	for _, a := range d["annotations"].(map[string]any)["list"].([]any) {
		if e, ok := a.(map[string]any)["expr"].(string); ok {
			out = append(out, e)
		}
	}
	return out
}

func TestBuildWritesOneDashboardPerServiceAndAnOverview(t *testing.T) {
	files := build(t, fixtureSet(t))
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	want := []string{"grafana/chat.json", "grafana/checkout.json", "grafana/overview.json", "grafana/search.json"}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths = %v, want %v", paths, want)
	}
	uids := map[string]bool{}
	for p, data := range files {
		d := decode(t, data)
		if d["schemaVersion"] != float64(42) {
			t.Errorf("%s: schemaVersion %v, want 42", p, d["schemaVersion"])
		}
		uid := d["uid"].(string)
		if uids[uid] {
			t.Errorf("%s: uid %s is used twice", p, uid)
		}
		uids[uid] = true
		if !strings.Contains(d["description"].(string), "DO NOT EDIT") {
			t.Errorf("%s: description does not say the file is generated", p)
		}
	}
	if d := decode(t, files["grafana/chat.json"]); d["uid"] != "inferslo-chat" {
		t.Errorf("chat uid = %v", d["uid"])
	}
}

func TestGoldenDashboards(t *testing.T) {
	for p, data := range build(t, fixtureSet(t)) {
		golden.Check(t, path.Base(p), data, *update)
	}
}

func TestBuildIsDeterministicWhateverTheInputOrder(t *testing.T) {
	set := fixtureSet(t)
	first := build(t, set)
	reversed := model.Set{SLOs: slices.Clone(set.SLOs)}
	slices.Reverse(reversed.SLOs)
	second := build(t, reversed)
	for p, data := range first {
		if !bytes.Equal(data, second[p]) {
			t.Errorf("%s changes with the order of the SLOs", p)
		}
	}
}

func TestEveryQueryParsesAsPromQL(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	n := 0
	for path, data := range build(t, fixtureSet(t)) {
		for _, q := range allQueries(t, decode(t, data)) {
			n++
			if _, err := p.ParseExpr(expandMacros(q)); err != nil {
				t.Errorf("%s: %q does not parse: %v", path, q, err)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d queries found; the dashboards look empty", n)
	}
}

// seriesRef is one recorded series a query reads.
type seriesRef struct{ name, slo, window string }

// recordedReads lists the inferslo:* selectors of a query with their slo and
// window matchers (empty when the query does not pin them).
func recordedReads(t testing.TB, q string) []seriesRef {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expandMacros(q))
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	var out []seriesRef
	for _, ms := range parser.ExtractSelectors(e) {
		var r seriesRef
		for _, m := range ms {
			switch {
			case m.Name == prommodel.MetricNameLabel:
				r.name = m.Value
			case m.Name == model.LabelSLO && m.Type == labels.MatchEqual:
				r.slo = m.Value
			case m.Name == model.LabelWindow && m.Type == labels.MatchEqual:
				r.window = m.Value
			}
		}
		if strings.HasPrefix(r.name, "inferslo:") {
			out = append(out, r)
		}
	}
	return out
}

// recordedByRules reads the rule files the rules backend writes for a set
// and lists what they record: name, slo and window of every recording rule,
// plus the alert names. A rule without a window label keeps the window of
// the series it reads, so that is taken from its expression.
func recordedByRules(t *testing.T, set model.Set) (map[seriesRef]bool, map[string]bool) {
	t.Helper()
	files, err := rules.Build(set, nil)
	if err != nil {
		t.Fatalf("rules.Build: %v", err)
	}
	sloOfGroup := map[string]string{}
	for _, slo := range set.SLOs {
		sloOfGroup[rules.GroupName(slo)] = slo.Name
	}
	recorded := map[seriesRef]bool{}
	alerts := map[string]bool{}
	for _, f := range files {
		groups, errs := rulefmt.Parse(f.Data, false, prommodel.UTF8Validation, parser.NewParser(parser.Options{}), promslog.NewNopLogger())
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f.Path, errs)
		}
		for _, g := range groups.Groups {
			slo, ok := sloOfGroup[g.Name]
			if !ok {
				t.Fatalf("%s: group %s belongs to no SLO", f.Path, g.Name)
			}
			for _, r := range g.Rules {
				if r.Alert != "" {
					alerts[r.Alert] = true
					continue
				}
				window := r.Labels[model.LabelWindow]
				if window == "" {
					for _, read := range recordedReads(t, r.Expr) {
						if read.window != "" {
							window = read.window
							break
						}
					}
				}
				recorded[seriesRef{r.Record, slo, window}] = true
				recorded[seriesRef{r.Record, slo, ""}] = true
			}
		}
	}
	return recorded, alerts
}

func TestPanelsReadOnlySeriesTheRulesBackendRecords(t *testing.T) {
	set := fixtureSet(t)
	recorded, alerts := recordedByRules(t, set)
	// The lookup tells recorded windows from others, or this test proves nothing.
	if !recorded[seriesRef{model.ErrorRatio, "chat-ttft", "1h"}] || recorded[seriesRef{model.ErrorRatio, "chat-ttft", "7m"}] ||
		recorded[seriesRef{model.EventsRate, "no-such-slo", ""}] {
		t.Fatal("recordedByRules does not tell recorded series from others")
	}
	known := []string{model.EventsRate, model.BadEventsRate, model.ErrorRatio, model.BudgetRemaining, model.Objective, model.Info}
	reads := 0
	for p, data := range build(t, set) {
		for _, q := range allQueries(t, decode(t, data)) {
			for _, r := range recordedReads(t, q) {
				reads++
				if !slices.Contains(known, r.name) {
					t.Errorf("%s: %q reads %s, which compiler/rules/names.go does not name", p, q, r.name)
				}
				if r.slo == "" {
					// A query over all SLOs selects them by service; every
					// SLO must record what it reads.
					if !strings.Contains(q, model.LabelService+"=~") {
						t.Errorf("%s: %q reads %s without pinning an SLO or services", p, q, r.name)
					}
					for _, slo := range set.SLOs {
						if !recorded[seriesRef{r.name, slo.Name, ""}] {
							t.Errorf("%s: %q reads %s, which SLO %s does not record", p, q, r.name, slo.Name)
						}
					}
					continue
				}
				if !recorded[r] {
					t.Errorf("%s: %q reads %s{slo=%q,window=%q}, which the generated rules never record", p, q, r.name, r.slo, r.window)
				}
			}
			if strings.Contains(q, "ALERTS") {
				for _, a := range []string{model.AlertBurn, model.AlertNoData} {
					if !alerts[a] {
						t.Errorf("%s: %q shows alert %s, which the generated rules never define", p, q, a)
					}
				}
			}
		}
	}
	if reads < 20 {
		t.Errorf("only %d recorded-series reads found", reads)
	}
}

func TestRawSeriesAreReadOnlyForPercentilesAndEngineSignals(t *testing.T) {
	set := fixtureSet(t)
	allowed := map[string]bool{"ALERTS": true}
	for _, s := range set.SLOs {
		if inf := s.Inference; inf != nil {
			sg := inf.Signals
			for _, n := range []string{sg.QueueDepth, sg.Running, sg.KVCacheUsage, sg.PromptTokens, sg.GenerationTokens, sg.TTFT + "_bucket", inf.Histogram + "_bucket"} {
				allowed[n] = true
			}
		}
	}
	for p, data := range build(t, set) {
		for _, q := range allQueries(t, decode(t, data)) {
			e, err := parser.NewParser(parser.Options{}).ParseExpr(expandMacros(q))
			if err != nil {
				t.Fatal(err)
			}
			for _, ms := range parser.ExtractSelectors(e) {
				for _, m := range ms {
					if m.Name != prommodel.MetricNameLabel || strings.HasPrefix(m.Value, "inferslo:") {
						continue
					}
					if !allowed[m.Value] {
						t.Errorf("%s: %q reads raw series %s", p, q, m.Value)
					}
					if strings.HasSuffix(m.Value, "_bucket") && !strings.HasPrefix(q, "histogram_quantile(") {
						t.Errorf("%s: %q reads a histogram for something other than a percentile", p, q)
					}
				}
			}
		}
	}
}

func TestPanels(t *testing.T) {
	set := fixtureSet(t)
	files := build(t, set)
	chat := decode(t, files["grafana/chat.json"])
	checkout := decode(t, files["grafana/checkout.json"])
	overview := decode(t, files["grafana/overview.json"])
	one := func(t *testing.T, d map[string]any, prefix string) map[string]any {
		t.Helper()
		ps := panelsTitled(d, prefix)
		var exact []map[string]any
		for _, p := range ps {
			if p["title"] == prefix {
				exact = append(exact, p)
			}
		}
		if len(exact) == 1 {
			return exact[0]
		}
		if len(ps) != 1 {
			t.Fatalf("%d panels titled %q, want 1", len(ps), prefix)
		}
		return ps[0]
	}
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"the TTFT panel draws p50, p95 and p99 with the 0.5 s threshold as a line", func(t *testing.T) {
			p := one(t, chat, "Time to first token")
			es := exprs(p)
			if len(es) != 3 || !strings.HasPrefix(es[0], "histogram_quantile(0.5,") || !strings.HasPrefix(es[2], "histogram_quantile(0.99,") {
				t.Errorf("targets = %q", es)
			}
			if got := thresholdValues(p); !slices.Equal(got, []string{"0.5"}) {
				t.Errorf("thresholds = %v, want [0.5]", got)
			}
			if m := lookup(p, "fieldConfig", "defaults", "custom", "thresholdsStyle", "mode"); m != "line" {
				t.Errorf("threshold style = %v, want line", m)
			}
			if u := lookup(p, "fieldConfig", "defaults", "unit"); u != "s" {
				t.Errorf("unit = %v, want s", u)
			}
		}},
		{"raw histogram queries keep the spec selector and use the selector variables", func(t *testing.T) {
			for _, e := range exprs(one(t, chat, "Time to first token")) {
				for _, want := range []string{`vllm:time_to_first_token_seconds_bucket{`, chatSelector, `model_name=~"$model_name"`, `instance=~"$instance"`, `[$__rate_interval]`, `sum by (le)`} {
					if !strings.Contains(e, want) {
						t.Errorf("%q lacks %q", e, want)
					}
				}
			}
		}},
		{"the ITL panel draws its 0.05 s threshold", func(t *testing.T) {
			if got := thresholdValues(one(t, chat, "Inter-token latency")); !slices.Equal(got, []string{"0.05"}) {
				t.Errorf("thresholds = %v", got)
			}
		}},
		{"no TPOT or end-to-end panel appears without an SLO of that role", func(t *testing.T) {
			if n := len(panelsTitled(chat, "Time per output token")) + len(panelsTitled(chat, "End-to-end")); n != 0 {
				t.Errorf("%d unexpected latency panels", n)
			}
		}},
		{"each burn-rate panel marks every tier factor and reads every alert window", func(t *testing.T) {
			ps := panelsTitled(chat, "Burn rate")
			if len(ps) != 3 {
				t.Fatalf("%d burn-rate panels, want one per chat SLO", len(ps))
			}
			for _, p := range ps {
				if got := thresholdValues(p); !slices.Equal(got, []string{"1", "3", "6", "14.4"}) {
					t.Errorf("tier factors = %v, want [1 3 6 14.4]", got)
				}
				var windows []string
				for _, e := range exprs(p) {
					for _, r := range recordedReads(t, e) {
						windows = append(windows, r.window)
					}
				}
				if want := []string{"5m", "30m", "1h", "2h", "6h", "1d", "3d"}; !slices.Equal(windows, want) {
					t.Errorf("windows = %v, want %v", windows, want)
				}
			}
		}},
		{"the error-ratio panel draws the error budget of its SLO", func(t *testing.T) {
			var got []string
			for _, p := range panelsTitled(chat, "Error ratio") {
				got = append(got, thresholdValues(p)...)
			}
			// chat-errors, chat-itl, chat-ttft in name order.
			if !slices.Equal(got, []string{"0.001", "0.01", "0.01"}) {
				t.Errorf("budget lines = %v", got)
			}
		}},
		{"the budget stat covers every SLO of the service", func(t *testing.T) {
			p := one(t, chat, "Error budget remaining")
			if len(exprs(p)) != 3 || p["type"] != "stat" || lookup(p, "fieldConfig", "defaults", "unit") != "percentunit" {
				t.Errorf("budget stat = %v %q", p["type"], exprs(p))
			}
		}},
		{"the firing-alerts panel selects both SLO alerts of the service", func(t *testing.T) {
			e := exprs(one(t, chat, "Alerts on this service"))[0]
			for _, want := range []string{`alertname=~"ErrorBudgetBurn|SLIDataMissing"`, `service="chat"`, `alertstate="firing"`} {
				if !strings.Contains(e, want) {
					t.Errorf("%q lacks %q", e, want)
				}
			}
		}},
		{"queue depth shows waiting and running requests", func(t *testing.T) {
			es := strings.Join(exprs(one(t, chat, "Queue depth")), " ")
			if !strings.Contains(es, "vllm:num_requests_waiting") || !strings.Contains(es, "vllm:num_requests_running") {
				t.Errorf("queue targets = %s", es)
			}
		}},
		{"KV-cache usage is a fraction between 0 and 1", func(t *testing.T) {
			p := one(t, chat, "KV-cache usage")
			if lookup(p, "fieldConfig", "defaults", "unit") != "percentunit" || lookup(p, "fieldConfig", "defaults", "max") != float64(1) {
				t.Errorf("KV panel field config = %v", jsonText(lookup(p, "fieldConfig", "defaults")))
			}
		}},
		{"request throughput is in requests per second from the recorded events rate", func(t *testing.T) {
			p := one(t, chat, "Request throughput")
			if lookup(p, "fieldConfig", "defaults", "unit") != "reqps" {
				t.Errorf("unit = %v", lookup(p, "fieldConfig", "defaults", "unit"))
			}
			es := exprs(p)
			for _, e := range es {
				if !strings.HasPrefix(e, model.EventsRate+"{") {
					t.Errorf("%q does not read the recorded events rate", e)
				}
				// ITL events are decode steps, one per token: not requests.
				if strings.Contains(e, `slo="chat-itl"`) {
					t.Errorf("%q plots per-token ITL events as requests", e)
				}
			}
			if len(es) != 2 {
				t.Errorf("request throughput has %d lines, want chat-ttft and chat-errors: %v", len(es), es)
			}
		}},
		{"token throughput reads both token counters", func(t *testing.T) {
			es := strings.Join(exprs(one(t, chat, "Token throughput")), " ")
			if !strings.Contains(es, "vllm:prompt_tokens_total") || !strings.Contains(es, "vllm:generation_tokens_total") {
				t.Errorf("token targets = %s", es)
			}
		}},
		{"the chat dashboard has a datasource variable and one per selector label", func(t *testing.T) {
			var names []string
			for _, v := range chat["templating"].(map[string]any)["list"].([]any) {
				vm := v.(map[string]any)
				names = append(names, vm["name"].(string))
				if vm["type"] == "query" && !strings.Contains(vm["query"].(string), chatSelector) {
					t.Errorf("variable %s lists values outside the spec selector: %v", vm["name"], vm["query"])
				}
			}
			if !slices.Equal(names, []string{"datasource", "model_name", "instance"}) {
				t.Errorf("variables = %v", names)
			}
		}},
		{"a plain ratio SLO gets error ratio, budget and burn panels but no engine panels", func(t *testing.T) {
			for _, prefix := range []string{"Error ratio", "Error budget remaining over 1w", "Burn rate", "Event throughput"} {
				one(t, checkout, prefix)
			}
			for _, prefix := range []string{"Time to first token", "Queue depth", "KV-cache", "Token throughput"} {
				if len(panelsTitled(checkout, prefix)) != 0 {
					t.Errorf("checkout has a %q panel", prefix)
				}
			}
			var names []string
			for _, v := range checkout["templating"].(map[string]any)["list"].([]any) {
				names = append(names, v.(map[string]any)["name"].(string))
			}
			if !slices.Equal(names, []string{"datasource"}) {
				t.Errorf("checkout variables = %v", names)
			}
		}},
		{"a raw-ratio SLO, which records no event counts, gets no throughput panel", func(t *testing.T) {
			search := decode(t, files["grafana/search.json"])
			for _, prefix := range []string{"Error ratio", "Burn rate", "Error budget remaining"} {
				if len(panelsTitled(search, prefix)) == 0 {
					t.Errorf("search lacks a %q panel", prefix)
				}
			}
			if n := len(panelsTitled(search, "Event throughput")); n != 0 {
				t.Errorf("search has %d throughput panels", n)
			}
		}},
		{"the plain SLO's burn panel marks its single tier", func(t *testing.T) {
			if got := thresholdValues(one(t, checkout, "Burn rate")); !slices.Equal(got, []string{"14.4"}) {
				t.Errorf("thresholds = %v", got)
			}
		}},
		{"the overview lists every SLO's budget and current burn", func(t *testing.T) {
			// One query per panel whatever the SLO count; what the
			// queries select is TestOverviewQueriesSelectEverySLOOnce's.
			for _, p := range dataPanels(overview) {
				if n := len(exprs(p)); p["type"] != "text" && n != 1 {
					t.Errorf("overview panel %v has %d queries", p["title"], n)
				}
			}
			catalog := one(t, overview, "SLO catalog")
			content := lookup(catalog, "options", "content").(string)
			for _, s := range set.SLOs {
				if !strings.Contains(content, "| "+s.Name+" |") {
					t.Errorf("catalog lacks %s", s.Name)
				}
			}
			if !strings.Contains(content, "burn > 14.4 over 1h and 5m (≈2.14% of the budget in 1h)") {
				t.Errorf("catalog does not spell out the page tier math:\n%s", content)
			}
		}},
		{"every panel has a title, a description and, when it draws data, a unit", func(t *testing.T) {
			for _, d := range []map[string]any{chat, checkout, overview} {
				for _, p := range dataPanels(d) {
					if p["title"] == "" || len(p["description"].(string)) < 40 {
						t.Errorf("panel %v lacks a real description", p["title"])
					}
					if p["type"] != "text" && lookup(p, "fieldConfig", "defaults", "unit") == nil {
						t.Errorf("panel %v has no unit", p["title"])
					}
					if p["type"] != "text" && jsonText(p["datasource"]) != `{"type":"prometheus","uid":"${datasource}"}` {
						t.Errorf("panel %v does not use the datasource variable", p["title"])
					}
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func TestUID(t *testing.T) {
	long := strings.Repeat("very-long-service-name-", 3)
	tests := []struct {
		name    string
		service string
		want    string
	}{
		{"a short service name is prefixed", "chat", "inferslo-chat"},
		{"a name of exactly 31 characters fits", strings.Repeat("a", 31), "inferslo-" + strings.Repeat("a", 31)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UID(tt.service); got != tt.want {
				t.Errorf("UID(%q) = %q, want %q", tt.service, got, tt.want)
			}
		})
	}
	t.Run("a long name is cut to 40 characters and stays distinct and stable", func(t *testing.T) {
		a, b := UID(long+"a"), UID(long+"b")
		if len(a) != 40 || len(b) != 40 || a == b || a != UID(long+"a") {
			t.Errorf("UIDs %q and %q", a, b)
		}
		if !strings.HasPrefix(a, "inferslo-very-long") {
			t.Errorf("UID %q lost its readable prefix", a)
		}
	})
}

func TestBuildRejectsWhatCannotBeDrawn(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *model.SLO)
		want   string
	}{
		{"a service named overview would overwrite the overview", func(s *model.SLO) { s.Service.Name = "overview" }, "overview"},
		{"a service name with a slash cannot name a file", func(s *model.SLO) { s.Service.Name = "a/b" }, "cannot name a dashboard file"},
		{"a selector that is not PromQL is reported", func(s *model.SLO) { s.Inference.Selector = `model_name=` }, "does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := vllmSLO(t, "ttft", "0.5", "99%")
			tt.change(&s)
			_, err := dashboards(model.Set{SLOs: []model.SLO{s}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestCheckRejectsBrokenLayoutsAndQueries(t *testing.T) {
	valid := func() dashboard {
		d := newDashboard("inferslo-x", "x", nil, nil)
		var g grid
		g.row("r")
		g.add(timeseriesPanel("a", "a panel", []target{query("up", "up")}, seriesSpec{}), 12, 8)
		g.add(timeseriesPanel("b", "b panel", []target{query("up", "up")}, seriesSpec{}), 12, 8)
		d.Panels = g.items
		return d
	}
	if err := newQueries().check(valid()); err != nil {
		t.Fatalf("the base dashboard is rejected: %v", err)
	}
	tests := []struct {
		name   string
		change func(d *dashboard)
		want   string
	}{
		{"two panels with one id are rejected", func(d *dashboard) {
			p := d.Panels[2].(panel)
			p.ID = d.Panels[1].(panel).ID
			d.Panels[2] = p
		}, "used twice"},
		{"a panel past the right edge is rejected", func(d *dashboard) {
			p := d.Panels[2].(panel)
			p.GridPos.X = 20
			d.Panels[2] = p
		}, "outside the grid"},
		{"overlapping panels are rejected", func(d *dashboard) {
			p := d.Panels[2].(panel)
			p.GridPos.X = 6
			d.Panels[2] = p
		}, "overlaps"},
		{"a query that is not PromQL is rejected", func(d *dashboard) {
			p := d.Panels[1].(panel)
			p.Targets[0].Expr = "rate(up[$__rate_interval]"
			d.Panels[1] = p
		}, "does not parse"},
		{"a template variable outside a label value is rejected", func(d *dashboard) {
			p := d.Panels[1].(panel)
			p.Targets[0].Expr = "up{job=~\"x\"}[$window]"
			d.Panels[1] = p
		}, "does not parse"},
		{"a panel without description is rejected", func(d *dashboard) {
			p := d.Panels[1].(panel)
			p.Description = ""
			d.Panels[1] = p
		}, "no description"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := valid()
			tt.change(&d)
			err := newQueries().check(d)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestPercentPrintsExactSharesExactly(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a whole percentage prints as is", "0.02", "2%"},
		{"two decimals print exactly", "0.0025", "0.25%"},
		{"a share that does not terminate is rounded and marked", "0.0214285714285714", "≈2.14%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percent(dec(t, tt.in)); got != tt.want {
				t.Errorf("percent(%s) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEmptySetWritesNothing(t *testing.T) {
	files, err := dashboards(model.Set{})
	if err != nil || len(files) != 0 {
		t.Errorf("dashboards(empty) = %d files, %v", len(files), err)
	}
}

func BenchmarkBuild(b *testing.B) {
	// Twenty services of three vLLM SLOs each: a large repository.
	var set model.Set
	for i := range 20 {
		for _, role := range []string{"ttft", "itl", "errors"} {
			s := vllmSLO(b, role, map[string]string{"ttft": "0.5", "itl": "0.05"}[role], "99%")
			s.Service.Name = "svc-" + string(rune('a'+i))
			s.Name = s.Service.Name + "-" + role
			set.SLOs = append(set.SLOs, s)
		}
	}
	b.ReportAllocs()
	var files artifact.Set
	for b.Loop() {
		var err error
		if files, err = dashboards(set); err != nil {
			b.Fatal(err)
		}
	}
	size := 0
	for _, f := range files {
		size += len(f.Data)
	}
	b.ReportMetric(float64(size), "output-bytes")
}

// dashboards returns grafana/<service>.json for every service and
// grafana/overview.json, sorted and checked, worded by the built-in
// templates, as a compilation writes them.
func dashboards(set model.Set) (artifact.Set, error) {
	b, err := NewBuilder(nil)
	if err != nil {
		return nil, err
	}
	out, err := b.Services(set)
	if err != nil {
		return nil, err
	}
	overview, err := b.Overview(set)
	if err != nil {
		return nil, err
	}
	out = append(out, overview...)
	out.Sort()
	return out, out.Check()
}
