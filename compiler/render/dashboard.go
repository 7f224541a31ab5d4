package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/inferslo/inferslo/compiler/artifact"
)

// The subset of Grafana's classic dashboard JSON the page draws. It is read
// back from the generated files, so the page shows exactly what Grafana would
// load, not a second description of it.

type dashboard struct {
	path        string
	service     string  // empty for the overview
	note        string  // a sentence under the title, for views drawn here
	UID         string  `json:"uid"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Panels      []panel `json:"panels"`
}

type panel struct {
	Type        string   `json:"type"`
	ID          int      `json:"id"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	GridPos     gridPos  `json:"gridPos"`
	Targets     []target `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit       string   `json:"unit"`
			Min        *float64 `json:"min"`
			Max        *float64 `json:"max"`
			NoValue    string   `json:"noValue"`
			Thresholds *struct {
				Steps []struct {
					Value *float64 `json:"value"`
					Color string   `json:"color"`
				} `json:"steps"`
			} `json:"thresholds"`
			Custom *struct {
				LineInterpolation string `json:"lineInterpolation"`
				FillOpacity       int    `json:"fillOpacity"`
				ThresholdsStyle   struct {
					Mode string `json:"mode"`
				} `json:"thresholdsStyle"`
			} `json:"custom"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Options struct {
		Content string `json:"content"`
	} `json:"options"`
}

type gridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

type target struct {
	Expr         string `json:"expr"`
	LegendFormat string `json:"legendFormat"`
	RefID        string `json:"refId"`
}

// threshold is one drawn threshold: a value and Grafana's colour name.
type threshold struct {
	value float64
	color string
}

// thresholds lists a panel's steps above the base step.
func (p panel) thresholds() []threshold {
	th := p.FieldConfig.Defaults.Thresholds
	if th == nil {
		return nil
	}
	var out []threshold
	for _, s := range th.Steps {
		if s.Value != nil {
			out = append(out, threshold{*s.Value, s.Color})
		}
	}
	return out
}

// thresholdStyle is how a time series draws its thresholds: "line",
// "dashed" or "" (not drawn).
func (p panel) thresholdStyle() string {
	c := p.FieldConfig.Defaults.Custom
	if c == nil {
		return ""
	}
	switch m := c.ThresholdsStyle.Mode; {
	case strings.HasPrefix(m, "dashed"):
		return "dashed"
	case strings.HasPrefix(m, "line"):
		return "line"
	}
	return ""
}

// dashboards reads the grafana/*.json files of an artifact set, services
// first (by path) and the overview last.
func dashboards(files artifact.Set) ([]dashboard, error) {
	var out []dashboard
	for _, f := range files {
		if path.Dir(f.Path) != "grafana" || path.Ext(f.Path) != ".json" {
			continue
		}
		var d dashboard
		if err := json.Unmarshal(f.Data, &d); err != nil {
			return nil, fmt.Errorf("read dashboard %s: %w", f.Path, err)
		}
		d.path = f.Path
		if base := strings.TrimSuffix(path.Base(f.Path), ".json"); base != "overview" {
			d.service = base
		}
		slices.SortStableFunc(d.Panels, func(a, b panel) int {
			return cmp.Or(cmp.Compare(a.GridPos.Y, b.GridPos.Y), cmp.Compare(a.GridPos.X, b.GridPos.X))
		})
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].service == "") != (out[j].service == "") {
			return out[i].service != ""
		}
		return out[i].path < out[j].path
	})
	return out, nil
}

// Queries lists every distinct panel query of the dashboards in files,
// sorted: the keys Page looks data up by.
func Queries(files artifact.Set) ([]string, error) {
	ds, err := dashboards(files)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range ds {
		out = d.queries(seen, out)
	}
	sort.Strings(out)
	return out, nil
}

// queries appends the dashboard's panel queries not yet seen to out.
func (d dashboard) queries(seen map[string]bool, out []string) []string {
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			if t.Expr != "" && !seen[t.Expr] {
				seen[t.Expr] = true
				out = append(out, t.Expr)
			}
		}
	}
	return out
}
