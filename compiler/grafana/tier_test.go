package grafana

import (
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
)

func TestTheSLOTableAndLegendShowTheTierOnlyWhenASpecNamesOne(t *testing.T) {
	tests := []struct {
		name  string
		tier  string // of the first SLO; the others name none
		cells []string
	}{
		{"specs without a tier keep the table and legend as they were", "", nil},
		{"a batch SLO gets a tier column, and the others read interactive", model.SLOTierBatch, []string{"| batch |", "| interactive |"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := fixtureSet(t)
			set.SLOs[0].SLOTier = tt.tier
			table := sloTable(set.SLOs, true, nil)
			legend := overviewLegend(set.SLOs)
			head, _, _ := strings.Cut(table, "\n")
			if got := strings.Contains(head, "| Tier |"); got != (tt.tier != "") {
				t.Errorf("tier column = %v in %q", got, head)
			}
			if got := strings.Contains(legend, model.LabelSLOTier); got != (tt.tier != "") {
				t.Errorf("legend %q names the tier: %v", legend, got)
			}
			for _, c := range tt.cells {
				if !strings.Contains(table, c) {
					t.Errorf("table lacks %s:\n%s", c, table)
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
				if strings.Count(line, "|") != strings.Count(head, "|") {
					t.Errorf("row %q has other columns than the head %q", line, head)
				}
			}
		})
	}
}
