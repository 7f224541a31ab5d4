package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/spec"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write the browser tests' screenshots to docs/review-chat.png and docs/backtest-report.png")

// reviewPanel is a dashboard panel as the generated JSON has it.
type reviewPanel struct {
	dashboard string // section anchor on the page
	Type      string `json:"type"`
	ID        int    `json:"id"`
	Title     string `json:"title"`
}

// renderChat renders the chat example the way `inferslo render` does, from
// the repository root so the page names the spec as a user would, and
// returns the output folder and the dashboards' panels.
func renderChat(t *testing.T) (string, []reviewPanel) {
	t.Helper()
	t.Chdir("../..")
	out := filepath.Join(t.TempDir(), "review")
	var stderr bytes.Buffer
	start := time.Now()
	if err := (&renderCmd{Specs: []string{"examples/chat.yaml"}, Output: out}).Run(&env{stdout: &bytes.Buffer{}, stderr: &stderr}); err != nil {
		t.Fatalf("render: %v\n%s", err, stderr.String())
	}
	t.Logf("rendered in %s: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(stderr.String()))

	res, err := spec.Load("examples/chat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := compiler.Compile(res.Set, compiler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var panels []reviewPanel
	for _, f := range compiled.Files {
		if path.Dir(f.Path) != "grafana" {
			continue
		}
		var d struct {
			Panels []reviewPanel `json:"panels"`
		}
		if err := json.Unmarshal(f.Data, &d); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		anchor := "dashboard-" + strings.TrimSuffix(path.Base(f.Path), ".json")
		for _, p := range d.Panels {
			p.dashboard = anchor
			panels = append(panels, p)
		}
	}
	if len(panels) < 10 {
		t.Fatalf("only %d panels in the chat dashboards", len(panels))
	}
	return out, panels
}

var (
	figureRE    = regexp.MustCompile(`(?s)<figure class="panel ([a-z-]+)" data-panel-id="(\d+)"[^>]*>(.*?)</figure>`)
	seriesPathD = regexp.MustCompile(`<path class="(?:series|spark)"[^>]* d="M[^"]*[LCHV][^"]*"`)
	statValue   = regexp.MustCompile(`<text class="statvalue"[^>]*>([^<]+)</text>`)
	pageBand    = regexp.MustCompile(`<rect class="band band-page"`)
	sectionRE   = regexp.MustCompile(`(?s)<section class="dashboard" id="([^"]+)">(.*?)</section>`)
)

// panelProblems lists every panel of the dashboards that the page (raw or
// as a browser's DOM) does not show with its title and drawn data.
func panelProblems(page string, panels []reviewPanel) []string {
	sections := map[string]string{}
	for _, m := range sectionRE.FindAllStringSubmatch(page, -1) {
		sections[m[1]] = m[2]
	}
	var out []string
	for _, p := range panels {
		sec, ok := sections[p.dashboard]
		if !ok {
			out = append(out, fmt.Sprintf("no section %s", p.dashboard))
			continue
		}
		if p.Type == "row" {
			if !strings.Contains(sec, `<h3 class="row"`) || !hasText(sec, p.Title) {
				out = append(out, fmt.Sprintf("%s: row %q missing", p.dashboard, p.Title))
			}
			continue
		}
		var body string
		for _, m := range figureRE.FindAllStringSubmatch(sec, -1) {
			if m[2] == fmt.Sprint(p.ID) {
				body = m[3]
			}
		}
		switch {
		case body == "":
			out = append(out, fmt.Sprintf("%s: panel %d %q not on the page", p.dashboard, p.ID, p.Title))
		case !hasText(body, p.Title):
			out = append(out, fmt.Sprintf("%s: panel %d lacks its title %q", p.dashboard, p.ID, p.Title))
		case p.Type == "text":
			if !strings.Contains(body, `<div class="text">`) {
				out = append(out, fmt.Sprintf("%s: text panel %q has no text", p.dashboard, p.Title))
			}
		default:
			if !strings.Contains(body, "<svg") || !seriesPathD.MatchString(body) {
				out = append(out, fmt.Sprintf("%s: %s panel %q draws no data path", p.dashboard, p.Type, p.Title))
			}
			if p.Type == "stat" {
				for _, v := range statValue.FindAllStringSubmatch(body, -1) {
					if strings.TrimSpace(v[1]) == "" || strings.Contains(v[1], "No data") {
						out = append(out, fmt.Sprintf("%s: stat %q shows %q", p.dashboard, p.Title, v[1]))
					}
				}
			}
		}
	}
	// A panel without data says so in a nodata text: none may.
	if n := strings.Count(page, `class="nodata"`); n > 0 {
		out = append(out, fmt.Sprintf("%d panels say No data", n))
	}
	if !pageBand.MatchString(sections["dashboard-chat"]) {
		out = append(out, "the chat dashboard draws no page-alert band")
	}
	// The fast burn's page, zoomed, opens the chat dashboard.
	if inc := sections["dashboard-incident-chat"]; !pageBand.MatchString(inc) || !seriesPathD.MatchString(inc) {
		out = append(out, "no incident view with a page band and drawn lines before the chat dashboard")
	}
	return out
}

// rampProblems lists what the page (raw or as a DOM) lacks of the chat
// TTFT SLO's load ramp: its link, its four charts with drawn lines, the
// queue's and the SLO's threshold lines, the warning's and the page's
// bands, a marker per KEDA trigger and the warning's lead as text.
func rampProblems(page string) []string {
	const id = "dashboard-ramp-chat-ttft"
	var out []string
	if !strings.Contains(page, `href="#`+id+`"`) {
		out = append(out, "no link to the load ramp")
	}
	var sec string
	for _, m := range sectionRE.FindAllStringSubmatch(page, -1) {
		if m[1] == id {
			sec = m[2]
		}
	}
	if sec == "" {
		return append(out, "no load-ramp section")
	}
	figures := map[string]string{}
	for _, m := range figureRE.FindAllStringSubmatch(sec, -1) {
		if t := regexp.MustCompile(`<span class="title">([^<]*)</span>`).FindStringSubmatch(m[3]); t != nil {
			figures[t[1]] = m[3]
		}
	}
	for _, title := range []string{"Load and serving capacity", "Replicas", "Queue per replica", "TTFT p99"} {
		body, ok := figures[title]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("ramp: no chart %q", title))
		case !seriesPathD.MatchString(body):
			out = append(out, fmt.Sprintf("ramp: chart %q draws no line", title))
		case (title == "Queue per replica" || title == "TTFT p99") && !strings.Contains(body, `<path class="threshold`):
			out = append(out, fmt.Sprintf("ramp: chart %q has no threshold line", title))
		}
	}
	if !pageBand.MatchString(sec) {
		out = append(out, "ramp: no page band")
	}
	if !regexp.MustCompile(`<rect class="band band-ticket"[^>]*><title>InferenceQueueBacklog`).MatchString(sec) {
		out = append(out, "ramp: no InferenceQueueBacklog band")
	}
	for _, trigger := range []string{"ttft-chat-ttft", "queue", "load"} {
		if !regexp.MustCompile(`<rect class="band band-marker"[^>]*><title>KEDA trigger ` + trigger + ` first asks`).MatchString(sec) {
			out = append(out, fmt.Sprintf("ramp: no marker for KEDA trigger %s", trigger))
		}
	}
	if !regexp.MustCompile(`InferenceQueueBacklog fired at \+\S+ \([^)]*\), \S+ before the page`).MatchString(sec) {
		out = append(out, "ramp: the warning's lead over the page is not stated")
	}
	return out
}

// hasText tells whether page holds s as text: escaped the way the page is
// written, or the way a DOM dump serializes text (quotes left alone).
func hasText(page, s string) bool {
	dom := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	return strings.Contains(page, html.EscapeString(s)) || strings.Contains(page, dom)
}

// The page itself, without a browser: every panel is there with data. The
// same page goes to Chromium: one render (seconds of CPU per SLO) serves
// both. A second render's bytes are render.txtar's.
func TestRenderWritesEveryPanelWithData(t *testing.T) {
	root, err := os.Getwd() // cmd/inferslo; renderChat moves to the repository root
	if err != nil {
		t.Fatal(err)
	}
	out, panels := renderChat(t)
	t.Run("in Chromium", func(t *testing.T) { reviewPageInChromium(t, root, out, panels) })
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(panelProblems(string(page), panels), rampProblems(string(page))...) {
		t.Error(p)
	}
	// The ramp's checks catch a page without markers or without the lead.
	for name, broken := range map[string]string{
		"no markers": regexp.MustCompile(`<rect class="band band-marker"[^>]*>.*?</rect>`).ReplaceAllString(string(page), ""),
		"no lead":    strings.ReplaceAll(string(page), "before the page", "ahead"),
	} {
		if len(rampProblems(broken)) == 0 {
			t.Errorf("a page with %s passes the ramp's checks", name)
		}
	}
}

// chromium runs one headless Chromium on url with extra flags and returns
// stdout and stderr.
func chromium(t *testing.T, bin, url string, extra ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, extra...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// consoleLines are the page's console messages in Chromium's log. The page
// runs no script, so any message at all is an error (a script error, a
// blocked resource, a CSP violation).
func consoleLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Uncaught") {
			out = append(out, l)
		}
	}
	return out
}

// serve serves dir and records every path the browser asks for.
func serve(t *testing.T, dir string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var paths []string
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), paths...)
	}
}

// fetchedBesides lists requested paths other than the page and a favicon:
// the page must load nothing else.
func fetchedBesides(paths []string, page string) []string {
	var out []string
	for _, p := range paths {
		if p != page && p != "/favicon.ico" {
			out = append(out, p)
		}
	}
	return out
}

// reviewPageInChromium opens the rendered chat review page in headless
// Chromium: every dashboard panel is in the DOM with its title and a drawn
// data path, no console message and no request besides the page itself.
// The screenshot goes to docs/review-chat.png with -update-screenshot.
func reviewPageInChromium(t *testing.T, root, out string, panels []reviewPanel) {
	bin := os.Getenv("INFERSLO_CHROMIUM")
	if bin == "" {
		t.Skip("set INFERSLO_CHROMIUM to a chromium binary to run the browser test")
	}
	start := time.Now()

	t.Run("the checks catch a script error and a missing resource", func(t *testing.T) {
		dir := t.TempDir()
		broken := `<!DOCTYPE html><html><body><p>x</p><img src="missing.png"><script>undefinedFunction();</script></body></html>`
		if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		srv, fetched := serve(t, dir)
		_, stderr := chromium(t, bin, srv.URL+"/", "--dump-dom")
		if len(consoleLines(stderr)) == 0 {
			t.Errorf("no console line found for a script error in:\n%s", stderr)
		}
		if len(fetchedBesides(fetched(), "/")) == 0 {
			t.Errorf("the missing image was not noticed: requests %v", fetched())
		}
	})

	srv, fetched := serve(t, out)
	// The file server answers / with index.html (and redirects the name).
	url := srv.URL + "/"

	dom, stderr := chromium(t, bin, url, "--dump-dom")
	if len(dom) < 1000 || !strings.Contains(dom, "</html>") {
		t.Fatalf("DOM dump of %d bytes:\n%.500s", len(dom), dom)
	}
	for _, p := range append(panelProblems(dom, panels), rampProblems(dom)...) {
		t.Error(p)
	}
	for _, l := range consoleLines(stderr) {
		t.Errorf("console: %s", l)
	}
	if extra := fetchedBesides(fetched(), "/"); len(extra) > 0 {
		t.Errorf("the page fetched %v besides itself", extra)
	}

	shot := filepath.Join(t.TempDir(), "review-chat.png")
	if *updateScreenshot {
		shot = filepath.Join(root, "..", "..", "docs", "review-chat.png")
	}
	// Tall enough for the SLO summaries and the whole chat dashboard.
	chromium(t, bin, url, "--screenshot="+shot, "--window-size=1400,4000")
	checkScreenshot(t, shot)
	t.Logf("browser test took %s; screenshot %s", time.Since(start).Round(time.Millisecond), shot)
}

// checkScreenshot insists on a decodable PNG of the asked size that is not
// one flat colour (a blank page).
func checkScreenshot(t *testing.T, file string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1400 || b.Dy() != 4000 {
		t.Errorf("screenshot is %dx%d, want 1400x4000", b.Dx(), b.Dy())
	}
	colours := map[[4]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y && len(colours) < 64; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colours) < 64 {
		t.Errorf("screenshot has only %d colours: a blank page?", len(colours))
	}
}
