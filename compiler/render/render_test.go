package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"html"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/grafana"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/rules"
)

func dec(t testing.TB, s string) model.Decimal {
	t.Helper()
	d, err := model.ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fixture is a vLLM TTFT SLO with two tiers and a plain ratio SLO.
func fixture(t testing.TB) model.Set {
	buckets := []float64{0.1, 0.25, 0.5, 0.75, 1}
	ttft := model.SLO{
		Name: "chat-ttft", DisplayName: "Chat <TTFT>", Description: "First token fast & <b>often</b>.",
		Service: model.Service{Name: "chat"}, Source: "examples/chat.yaml",
		Objective: dec(t, "0.99"), Window: 28 * 24 * time.Hour, Budgeting: "Occurrences",
		Evaluation: 30 * time.Second, ScrapeInterval: 15 * time.Second,
		Alerting: model.Alerting{NoData: true, Tiers: []model.Tier{
			{Severity: "page", For: 2 * time.Minute, Windows: []model.WindowPair{{Long: time.Hour, Short: 5 * time.Minute, Factor: dec(t, "14.4")}}},
			{Severity: "ticket", For: time.Hour, Windows: []model.WindowPair{{Long: 24 * time.Hour, Short: 2 * time.Hour, Factor: dec(t, "3")}}},
		}},
		SLI: model.SLI{Counter: true,
			Total: &model.Query{Expr: `vllm:time_to_first_token_seconds_count{model_name="m"}`},
			Good:  &model.Query{Expr: `vllm:time_to_first_token_seconds_bucket{model_name="m",le="0.5"}`}},
		Inference: &model.Inference{Engine: "vllm", EngineTitle: "vLLM", Role: "ttft", Threshold: dec(t, "0.5"),
			Histogram: "vllm:time_to_first_token_seconds", Buckets: buckets, Selector: `model_name="m"`, SelectorLabels: []string{"model_name"},
			Signals: model.Signals{QueueDepth: "vllm:num_requests_waiting", Running: "vllm:num_requests_running", KVCacheUsage: "vllm:kv_cache_usage_perc",
				Requests: "vllm:request_success_total", TTFT: "vllm:time_to_first_token_seconds"}},
	}
	plain := model.SLO{
		Name: "checkout-availability", Service: model.Service{Name: "checkout"}, Source: "examples/checkout.yaml",
		Objective: dec(t, "0.995"), Window: 7 * 24 * time.Hour, Budgeting: "Occurrences",
		Evaluation: time.Minute, ScrapeInterval: 30 * time.Second,
		Alerting: model.Alerting{Tiers: []model.Tier{{Severity: "page", For: 5 * time.Minute,
			Windows: []model.WindowPair{{Long: time.Hour, Short: 5 * time.Minute, Factor: dec(t, "14.4")}}}}},
		SLI: model.SLI{Counter: true, Total: &model.Query{Expr: `http_requests_total{job="checkout"}`},
			Bad: &model.Query{Expr: `http_requests_total{job="checkout",code=~"5.."}`}},
	}
	set := model.Set{SLOs: []model.SLO{ttft, plain}}
	set.Sort()
	return set
}

func artifacts(t testing.TB, set model.Set) artifact.Set {
	t.Helper()
	b, err := grafana.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := b.Services(set)
	if err != nil {
		t.Fatal(err)
	}
	overview, err := b.Overview(set)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, overview...)
	r, err := rules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	return append(files, r...)
}

var start = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// scenario gives every query a healthy day then a fast burn: values rise
// twentyfold over the last two hours. ALERTS queries fire during the burn.
func scenario(t testing.TB, files artifact.Set) map[string][]Series {
	qs, err := Queries(files)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string][]Series{}
	for i, q := range qs {
		var pts []Point
		for m := 0; m <= 26*60; m += 10 {
			ts := start.Add(time.Duration(m) * time.Minute)
			v := 0.002 * float64(1+i%3) * (1 + 0.2*math.Sin(float64(m)/90))
			if m >= 24*60 {
				v *= 20
			}
			if strings.Contains(q, "ALERTS") {
				v = 0
				if m >= 24*60+30 {
					v = 1
				}
			}
			pts = append(pts, Point{ts, v})
		}
		s := Series{Labels: map[string]string{"alertname": "ErrorBudgetBurn", "severity": "page", "slo": "chat-ttft", "service": "chat", "instance": "pod-1"}, Points: pts}
		data[q] = []Series{s}
	}
	return data
}

func page(t testing.TB, set model.Set, files artifact.Set, data map[string][]Series, opts Options) string {
	t.Helper()
	b, err := drawAll(set, files, data, opts)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// figures splits the page into its panels: title and SVG markup.
func figures(t *testing.T, p string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	re := regexp.MustCompile(`(?s)<figure class="panel (\w+)"[^>]*>\s*<figcaption><span class="title">(.*?)</span>.*?</figure>`)
	for _, m := range re.FindAllStringSubmatch(p, -1) {
		out[html.UnescapeString(m[2])] = append(out[html.UnescapeString(m[2])], m[0])
	}
	return out
}

func svgOf(fig string) string {
	i, j := strings.Index(fig, "<svg"), strings.Index(fig, "</svg>")
	if i < 0 || j < 0 {
		return ""
	}
	return fig[i : j+len("</svg>")]
}

// svgPaths parses an SVG as XML and returns the d attribute of each path
// by class.
func svgPaths(t *testing.T, svg string) map[string][]string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	out := map[string][]string{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "path" {
			var class, d string
			for _, a := range se.Attr {
				switch a.Name.Local {
				case "class":
					class = a.Value
				case "d":
					d = a.Value
				}
			}
			out[strings.Fields(class)[0]] = append(out[strings.Fields(class)[0]], d)
		}
	}
	return out
}

func TestPageShowsEveryDashboardPanelSLOAndFile(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	p := page(t, set, files, scenario(t, files), Options{Scenario: "a healthy day, then a fast burn"})
	var want []string
	for _, f := range files {
		want = append(want, f.Path)
	}
	for _, s := range set.SLOs {
		want = append(want, s.Name)
	}
	want = append(want, "a healthy day, then a fast burn", "SLOs: chat", "SLOs: checkout", "SLOs: overview",
		"Time to first token (p50, p95, p99)", "Burn rate", "Queue depth", "KV-cache usage", "Error budget remaining")
	for _, w := range want {
		if !strings.Contains(p, esc(w)) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if n := strings.Count(p, `<figure class="panel`); n < 20 {
		t.Errorf("only %d panels drawn", n)
	}
}

func TestEveryChartPanelDrawsNonEmptyPaths(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	figs := figures(t, page(t, set, files, scenario(t, files), Options{}))
	if len(figs) < 10 {
		t.Fatalf("only %d distinct panel titles found", len(figs))
	}
	for title, list := range figs {
		for _, fig := range list {
			if strings.Contains(fig, `class="panel text"`) {
				continue
			}
			paths := svgPaths(t, svgOf(fig))
			drawn := append(paths["series"], paths["spark"]...)
			if len(drawn) == 0 {
				t.Errorf("panel %q draws no data path", title)
			}
			for _, d := range drawn {
				if !strings.HasPrefix(d, "M") || !strings.ContainsAny(d, "LH") {
					t.Errorf("panel %q has an empty or one-point path %q", title, d)
				}
			}
		}
	}
}

func TestThresholdsAndTierFactorsAreDrawn(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	figs := figures(t, page(t, set, files, scenario(t, files), Options{}))
	tests := []struct {
		name  string
		title string
		want  int // threshold paths in the first panel with that title
		class string
	}{
		{"the TTFT panel draws the 0.5 s SLO line", "Time to first token (p50, p95, p99)", 1, "threshold line"},
		{"the chat burn panel draws both tier factors dashed", "Burn rate", 2, "threshold dashed"},
		{"the error-ratio panel draws the budget line", "Error ratio", 1, "threshold line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := figs[tt.title]
			if len(list) == 0 {
				t.Fatalf("no panel %q", tt.title)
			}
			svg := svgOf(list[0])
			if n := strings.Count(svg, `class="`+tt.class+`"`); n != tt.want {
				t.Errorf("%d %q paths, want %d", n, tt.class, tt.want)
			}
		})
	}
	if !strings.Contains(svgOf(figs["Time to first token (p50, p95, p99)"][0]), ">500 ms</text>") {
		t.Error("the TTFT threshold is not labelled 500 ms")
	}
}

func TestAlertBandsFollowTheFiringIntervals(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	data := scenario(t, files)

	t.Run("bands are read from the ALERTS data when no alerts are given", func(t *testing.T) {
		figs := figures(t, page(t, set, files, data, Options{}))
		svg := svgOf(figs["Time to first token (p50, p95, p99)"][0])
		if n := strings.Count(svg, `class="band band-page"`); n != 1 {
			t.Errorf("%d page bands, want 1", n)
		}
	})
	t.Run("given alerts are drawn on their service's dashboard only", func(t *testing.T) {
		quiet := map[string][]Series{}
		for q, s := range data {
			if !strings.Contains(q, "ALERTS") {
				quiet[q] = s
			}
		}
		alerts := []Alert{{Name: "ErrorBudgetBurn", Severity: "ticket", SLO: "checkout-availability", Service: "checkout",
			From: start.Add(3 * time.Hour), To: start.Add(5 * time.Hour)}}
		p := page(t, set, files, quiet, Options{Alerts: alerts})
		chat := p[strings.Index(p, `id="dashboard-chat"`):strings.Index(p, `id="dashboard-checkout"`)]
		checkout := p[strings.Index(p, `id="dashboard-checkout"`):strings.Index(p, `id="dashboard-overview"`)]
		if strings.Contains(chat, "band-ticket\" x=") {
			t.Error("a checkout alert is drawn on the chat dashboard")
		}
		if !strings.Contains(checkout, `class="band band-ticket"`) {
			t.Error("the checkout alert is not drawn on its dashboard")
		}
	})
	t.Run("an alert of a minute over a day keeps a visible width", func(t *testing.T) {
		alerts := []Alert{{Name: "ErrorBudgetBurn", Severity: "ticket", SLO: "checkout-availability", Service: "checkout",
			From: start.Add(3 * time.Hour), To: start.Add(3*time.Hour + time.Minute)}}
		p := page(t, set, files, data, Options{Alerts: alerts})
		m := regexp.MustCompile(`class="band band-ticket" x="[^"]*" y="[^"]*" width="([^"]*)"`).FindStringSubmatch(p)
		if m == nil {
			t.Fatal("no ticket band drawn")
		}
		if w, _ := strconv.ParseFloat(m[1], 64); w < minBand {
			t.Errorf("band %v wide, want at least %v", w, minBand)
		}
	})
}

func TestPageIsSelfContainedAndEscapesSpecText(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	p := page(t, set, files, scenario(t, files), Options{Title: "review <of> PR"})
	for _, bad := range []string{"<script", " src=", "<link", "@import", "url(", "<b>often</b>", "Chat <TTFT>", "review <of>"} {
		if strings.Contains(p, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if !strings.Contains(p, "Chat &lt;TTFT&gt;") {
		t.Error("the SLO display name is not shown escaped")
	}
}

func TestPageIsDeterministic(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	data := scenario(t, files)
	a, b := page(t, set, files, data, Options{}), page(t, set, files, data, Options{})
	if a != b {
		t.Error("two renders of the same input differ")
	}
}

func TestPageWithoutDataStillDrawsEveryPanel(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	p := page(t, set, files, nil, Options{})
	if !strings.Contains(p, "no SLO alert firing") || !strings.Contains(p, "No data") {
		t.Error("empty panels do not say they have no data")
	}
	for title, list := range figures(t, p) {
		for _, fig := range list {
			if !strings.Contains(fig, `class="panel text"`) && len(svgPaths(t, svgOf(fig))["axis"]) == 0 {
				t.Errorf("panel %q has no axis without data", title)
			}
		}
	}
}

func TestPageNeedsDashboards(t *testing.T) {
	set := fixture(t)
	r, err := rules.Build(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drawAll(set, r, nil, Options{}); err == nil || !strings.Contains(err.Error(), "no dashboards") {
		t.Errorf("error = %v", err)
	}
}

func TestSLOSummarySpellsOutTheTierMath(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	p := page(t, set, files, nil, Options{})
	for _, want := range []string{
		"14.4 × 0.01 = 0.144",       // error ratio that pages
		"14.4 × 1h / 4w = ≈2.14%",   // budget spent before it fires
		"4w / 14.4 = 1d22h40m",      // budget gone at that burn
		"1 - 0.99 = 0.01 of events", // the budget
		"about 6h43m12s of full outage",
	} {
		if !strings.Contains(p, esc(want)) {
			t.Errorf("the SLO summary lacks %q", want)
		}
	}
}

func TestEvaluable(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"the rate interval macro becomes the given duration",
			`sum(rate(x[$__rate_interval]))`, `sum(rate(x[1m]))`},
		{"a variable matcher matches everything",
			`x{model_name="m",model_name=~"$model_name",instance=~"${instance}"}`, `x{model_name="m",model_name=~".*",instance=~".*"}`},
		{"a query without Grafana syntax is unchanged",
			`inferslo:burn_rate:ratio{slo="a",window="5m"}`, `inferslo:burn_rate:ratio{slo="a",window="5m"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Evaluable(tt.in, time.Minute); got != tt.want {
				t.Errorf("Evaluable = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		unit string
		want string
	}{
		{"sub-second latencies print in milliseconds", 0.5, "s", "500 ms"},
		{"latencies of a second or more print in seconds", 2.5, "s", "2.5 s"},
		{"ratios print as percentages", 0.999, "percentunit", "99.9%"},
		{"request rates carry their unit", 12000, "reqps", "12k req/s"},
		{"custom suffixes are appended", 3, "suffix: tok/s", "3 tok/s"},
		{"tiny numbers do not print in exponent form", 0.00001, "", "0.00001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatValue(tt.v, tt.unit); got != tt.want {
				t.Errorf("formatValue(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
			}
		})
	}
}

func TestMarkdownTablesAndEscaping(t *testing.T) {
	got := markdown("Hello `x<y>` & co\n\n| a | b |\n|---|---|\n| 1 \\| 2 | <i> |\n")
	for _, want := range []string{"<p>Hello <code>x&lt;y&gt;</code> &amp; co</p>", "<th>a</th><th>b</th>", "<td>1 | 2</td><td>&lt;i&gt;</td>"} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown output lacks %q:\n%s", want, got)
		}
	}
}

func BenchmarkPage(b *testing.B) {
	set := fixture(b)
	files := artifacts(b, set)
	data := scenario(b, files)
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		var err error
		if out, err = drawAll(set, files, data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out)), "page-bytes")
}

func TestStatValuesTakeTheirThresholdColour(t *testing.T) {
	var p panel
	if err := json.Unmarshal([]byte(`{"type":"stat","fieldConfig":{"defaults":{"thresholds":{"mode":"absolute","steps":[
		{"value":null,"color":"red"},{"value":0,"color":"orange"},{"value":0.25,"color":"green"}]}}}}`), &p); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		v    float64
		want string
	}{
		{"an overspent budget is red", -0.1, "red"},
		{"a budget at exactly zero takes the zero step", 0, "orange"},
		{"a budget under a quarter is orange", 0.2, "orange"},
		{"a healthy budget is green", 0.9, "green"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := colorFor(p, tt.v); got != tt.want {
				t.Errorf("colorFor(%v) = %s, want %s", tt.v, got, tt.want)
			}
		})
	}
}

func TestFiringIntervalsCloseAtTheNextQuietSample(t *testing.T) {
	at := func(m int) time.Time { return start.Add(time.Duration(m) * time.Minute) }
	s := Series{Labels: map[string]string{"alertname": "ErrorBudgetBurn", "severity": "page", "slo": "a"}, Points: []Point{
		{at(0), 0}, {at(1), 1}, {at(2), 1}, {at(3), 0}, {at(4), math.NaN()}, {at(5), 1}, {at(6), 1},
	}}
	got := intervals(s, "svc")
	if len(got) != 2 {
		t.Fatalf("%d intervals, want 2: %+v", len(got), got)
	}
	if !got[0].From.Equal(at(1)) || !got[0].To.Equal(at(3)) || !got[1].From.Equal(at(5)) || !got[1].To.Equal(at(6)) {
		t.Errorf("intervals = %+v", got)
	}
	if got[0].Service != "svc" || got[0].Severity != "page" || got[0].SLO != "a" {
		t.Errorf("labels = %+v", got[0])
	}
}

func TestAnAlertOfAGroupedSLONamesItsGroup(t *testing.T) {
	at := func(m int) time.Time { return start.Add(time.Duration(m) * time.Minute) }
	s := Series{Labels: map[string]string{"alertname": "ErrorBudgetBurn", "severity": "page", "slo": "fleet-ttft", "model_name": "llama-8b"},
		Points: []Point{{at(0), 1}, {at(1), 0}}}
	got := intervals(s, "svc")
	if len(got) != 1 || got[0].Group != `model_name="llama-8b"` {
		t.Fatalf("intervals = %+v, want one naming model_name=\"llama-8b\"", got)
	}
	if text := alertText(got[0]); !strings.Contains(text, `fleet-ttft model_name="llama-8b"`) {
		t.Errorf("the alert's text %q does not name the model", text)
	}
}

func TestStatNamesAreNeverDrawnOverTheirValues(t *testing.T) {
	tests := []struct {
		name   string
		series int
		w, h   int
	}{
		{"three SLOs in a half-width panel", 3, 12, 8},
		{"nineteen SLOs in a half-width panel", 19, 12, 8},
		{"forty SLOs in a short panel", 40, 12, 6},
	}
	// A list (many values) draws name and value on one line: the name
	// ends before the value begins. A value is never under 12 units.
	nameRE := regexp.MustCompile(`<text class="statname( list)?"(?: style="font-size:([\d.]+)px")? x="([\d.]+)" y="([\d.]+)"><title>[^<]*</title>([^<]*)</text>`)
	valueRE := regexp.MustCompile(`<text class="statvalue(?: list)?" style="fill:[^;]+;font-size:([\d.]+)px" x="([\d.]+)" y="([\d.]+)">([^<]*)<`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := panel{Type: "stat", Title: "Error budget remaining", GridPos: gridPos{W: tc.w, H: tc.h},
				Targets: []target{{Expr: "budget", LegendFormat: "{{slo}}", RefID: "A"}}}
			var ss []Series
			for i := range tc.series {
				ss = append(ss, Series{Labels: map[string]string{"slo": strings.Repeat("long-slo-name-", 2) + string(rune('a'+i%26))},
					Points: []Point{{Time: time.Unix(0, 0), Value: 0.5}, {Time: time.Unix(60, 0), Value: 0.1361}}})
			}
			var b bytes.Buffer
			writeStat(&b, p, map[string][]Series{"budget": ss})
			names, values := nameRE.FindAllStringSubmatch(b.String(), -1), valueRE.FindAllStringSubmatch(b.String(), -1)
			if len(names) != tc.series || len(values) != tc.series {
				t.Fatalf("%d names and %d values for %d series", len(names), len(values), tc.series)
			}
			num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
			for i := range names {
				nameX, nameY := num(names[i][3]), num(names[i][4])
				size, valueX, valueY := num(values[i][1]), num(values[i][2]), num(values[i][3])
				if size < 12 {
					t.Errorf("series %d: value drawn %.1f units high", i, size)
				}
				if names[i][1] != "" {
					// A glyph is at most about 0.6 of the font size wide.
					nameEnd := nameX + 0.6*num(names[i][2])*float64(len([]rune(names[i][5])))
					valueStart := valueX - 0.6*size*float64(len([]rune(values[i][4])))
					if nameY != valueY || nameEnd > valueStart {
						t.Errorf("series %d: name ends at %.1f,%.1f past the value's start %.1f,%.1f", i, nameEnd, nameY, valueStart, valueY)
					}
					continue
				}
				// A glyph rises about 0.75 of the font size above its baseline.
				if top := valueY - 0.75*size; top < nameY+2 {
					t.Errorf("series %d: value top %.1f is above the name's baseline %.1f", i, top, nameY)
				}
			}
			if strings.Contains(b.String(), "</title>"+strings.Repeat("long-slo-name-", 2)+"a<") && tc.series > 4 {
				t.Errorf("names wider than their cell are not shortened")
			}
		})
	}
}

func TestThresholdLabelsKeepApartWithinThePlot(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want []float64
	}{
		{"labels far apart stay at their lines", []float64{20, 60, 100}, []float64{20, 60, 100}},
		{"close labels move down one gap apart", []float64{50, 52, 54}, []float64{50, 61, 72}},
		{"labels pushed past the bottom move up", []float64{95, 98, 100}, []float64{78, 89, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ls []thLabel
			for _, y := range tc.in {
				ls = append(ls, thLabel{y: y})
			}
			var got []float64
			for _, l := range spread(ls, 10, 100, 11) {
				got = append(got, l.y)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("spread(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestTheIncidentViewZoomsIntoTheFirstPage(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	data := scenario(t, files)
	bandWidth := func(t *testing.T, fig string) float64 {
		t.Helper()
		m := regexp.MustCompile(`class="band band-page" x="[^"]*" y="[^"]*" width="([^"]*)"`).FindStringSubmatch(fig)
		if m == nil {
			t.Fatalf("no page band in:\n%.300s", fig)
		}
		w, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}

	t.Run("a page gets a zoomed view of its dashboard's threshold panels, before the dashboard", func(t *testing.T) {
		p := page(t, set, files, data, Options{})
		i, j := strings.Index(p, `id="dashboard-incident-chat"`), strings.Index(p, `id="dashboard-chat"`)
		if i < 0 || j < i {
			t.Fatalf("incident view at %d, chat dashboard at %d", i, j)
		}
		incident, day := figures(t, p[i:j]), figures(t, p[j:])
		title := "Time to first token (p50, p95, p99)"
		if len(incident[title]) != 1 {
			t.Fatalf("incident panels: %v", slices.Sorted(maps.Keys(incident)))
		}
		// The page fires for the last 90 minutes of 26 hours: a sliver of
		// the day, most of the zoomed 2h30m.
		zoomed, whole := bandWidth(t, incident[title][0]), bandWidth(t, day[title][0])
		if zoomed < 5*whole {
			t.Errorf("page band %.1f wide zoomed, %.1f over the day: not zoomed", zoomed, whole)
		}
		for _, fig := range incident[title] {
			svg := svgOf(fig)
			w, _ := strconv.ParseFloat(regexp.MustCompile(`viewBox="0 0 ([0-9.]+)`).FindStringSubmatch(svg)[1], 64)
			for _, d := range svgPaths(t, svg)["series"] {
				for _, m := range regexp.MustCompile(`[MLH]([0-9.-]+)`).FindAllStringSubmatch(d, -1) {
					if x, _ := strconv.ParseFloat(m[1], 64); x < marginLeft || x > w {
						t.Fatalf("a line is drawn at x=%v, outside the plot (0..%v): %s", x, w, d)
					}
				}
			}
		}
		if !strings.Contains(p[i:j], "Nov 2 00:30") {
			t.Error("the incident view does not say when the page fired")
		}
	})
	t.Run("without a page there is no incident view", func(t *testing.T) {
		tickets := []Alert{{Name: "ErrorBudgetBurn", Severity: "ticket", SLO: "chat-ttft", Service: "chat", From: start.Add(25 * time.Hour), To: start.Add(26 * time.Hour)}}
		if p := page(t, set, files, data, Options{Alerts: tickets}); strings.Contains(p, "Incident:") {
			t.Error("an incident view is drawn for a ticket")
		}
	})
}

func TestTheSummaryNamesCalendarWindowsAndTimeSlices(t *testing.T) {
	threshold := &model.Timeslices{Window: time.Minute}
	share := &model.Timeslices{Window: 5 * time.Minute, Target: model.NewDecimal(95, 100)}
	month := &model.Calendar{Unit: "M", Count: 1}
	tests := []struct {
		name       string
		edit       func(*model.SLO)
		window     string
		sliContain string
	}{
		{"a rolling SLO names its window", func(*model.SLO) {}, "4w", "within"},
		{"a calendar SLO names its calendar, not a duration", func(s *model.SLO) { s.Calendar = month }, "each calendar month", "within"},
		{"a threshold time-slice SLO counts slices by their value", func(s *model.SLO) {
			s.Timeslices = threshold
			s.SLI.Threshold = &model.Threshold{Op: "<=", Value: model.NewDecimal(3, 10)}
		}, "4w", "1m slices good when their value is <= 0.3"},
		{"a ratio time-slice SLO counts slices by their share of good events", func(s *model.SLO) { s.Timeslices = share }, "4w", "5m slices good when 95% of their events are"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fixture(t).SLOs[0]
			s.Window = 28 * 24 * time.Hour
			tt.edit(&s)
			if got := windowText(s); got != tt.window {
				t.Errorf("window %q, want %q", got, tt.window)
			}
			if got := sliText(s); !strings.Contains(got, tt.sliContain) {
				t.Errorf("indicator %q, want it to hold %q", got, tt.sliContain)
			}
		})
	}
}

func TestEverySeriesOfAPanelHasItsOwnColour(t *testing.T) {
	for _, n := range []int{3, 10, 11, 35, 120} {
		seen := map[string]int{}
		for i := range n {
			c := palette(i, n)
			if !regexp.MustCompile(`^#[0-9a-f]{6}$`).MatchString(c) {
				t.Fatalf("palette(%d, %d) = %q, not a #rrggbb colour", i, n, c)
			}
			if j, dup := seen[c]; dup {
				t.Errorf("%d series: series %d and %d are both %s", n, j, i, c)
			}
			seen[c] = i
		}
	}
}

func TestALineKeepsOnlyThePointsItsShapeNeeds(t *testing.T) {
	var line, curve [][2]float64
	for i := range 200 {
		x := float64(i) * 3
		line = append(line, [2]float64{x, 10 + x/2})
		curve = append(curve, [2]float64{x, 100 + 80*math.Sin(x/60)})
	}
	if got := simplify(line, 0.2); len(got) != 2 || got[0] != line[0] || got[1] != line[199] {
		t.Errorf("a straight line of 200 points keeps %d: %v", len(got), got)
	}
	got := simplify(curve, 0.2)
	if len(got) >= len(curve)/2 || len(got) < 10 {
		t.Errorf("a sine of 200 points keeps %d", len(got))
	}
	// Every point left out lies within the tolerance of the drawn line.
	k := 0
	for _, p := range curve {
		for k+1 < len(got)-1 && got[k+1][0] < p[0] {
			k++
		}
		if d := distToSegment(p, got[k], got[k+1]); d > 0.2+1e-9 {
			t.Errorf("point %v lies %.2f from the drawn line", p, d)
		}
	}
}
