package grafana

import (
	"regexp"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
)

var markdownContent = regexp.MustCompile(`"content": "(?:[^"\\]|\\.)*"`)

// A spec's path reaches the text panels as written: markdown in a file
// name (a link, an image, HTML) is escaped, not rendered.
func TestASpecPathIsEscapedInMarkdownPanels(t *testing.T) {
	slo := vllmSLO(t, "ttft", "0.25", "0.99")
	slo.Source = "specs/[docs](https:evil.example)<img src=x>.yaml"
	files, err := dashboards(model.Set{SLOs: []model.SLO{slo}})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		for _, m := range markdownContent.FindAllString(string(f.Data), -1) {
			if !strings.Contains(m, "Code generated") {
				continue
			}
			checked++
			if !strings.Contains(m, `from specs/\\[docs\\](https:evil.example)\\<img src=x\\>.yaml.`) {
				t.Errorf("%s renders the spec path as markdown: %s", f.Path, m)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no markdown panel found")
	}
}
