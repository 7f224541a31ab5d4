package render

import (
	"strings"
	"testing"
	"time"
)

func TestAnAddedSectionIsLinkedDrawnOverItsOwnRangeAndEscaped(t *testing.T) {
	set := fixture(t)
	files := artifacts(t, set)
	r, err := NewReview(set, files, "")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	var pts []Point
	for i := range 10 {
		pts = append(pts, Point{Time: t0.Add(time.Duration(i) * time.Minute), Value: float64(i)})
	}
	one := 1.0
	err = r.AddSection(Section{
		ID: "ramp-x", Title: "Load ramp: <script>x</script>", Note: `fired "early" & paged`,
		Charts: []Chart{{Title: "Queue per replica", Max: &one, Series: []Series{{Name: "waiting", Points: pts}},
			Thresholds: []Threshold{{Value: 0.5, Color: "orange"}}}},
		Alerts: []Alert{{Name: "KEDA trigger load first asks for 3 replicas", Severity: MarkerSeverity, From: t0.Add(3 * time.Minute), To: t0.Add(3 * time.Minute)}},
		From:   t0, To: t0.Add(9 * time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	p := string(r.Page("a ramp"))
	for _, want := range []string{
		`<a href="#dashboard-ramp-x">Load ramp: &lt;script&gt;x&lt;/script&gt;</a>`,
		`<section class="dashboard" id="dashboard-ramp-x">`,
		`fired &#34;early&#34; &amp; paged`,
		`<rect class="band band-marker"`,
		`KEDA trigger load first asks for 3 replicas`,
		`event (hover for which)`,
		`<path class="threshold`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(p, "<script>") {
		t.Error("the section's title reached the page unescaped")
	}
	// Max pins the axis: the top label is 1, though the data reaches 9.
	sec := p[strings.Index(p, `id="dashboard-ramp-x"`):]
	if !strings.Contains(sec, `>1</text>`) || strings.Contains(sec, `>9</text>`) || strings.Contains(sec, `>10</text>`) {
		t.Errorf("the axis does not stop at Max 1:\n%s", svgOf(sec))
	}
}
