package grafana

import (
	"regexp"
	"strings"
	"testing"

	"github.com/inferslo/inferslo/compiler/model"
)

func TestACatalogTitleInTheSLOTableShowsAsWritten(t *testing.T) {
	slo := model.SLO{Name: "chat", Objective: model.NewDecimal(999, 1000),
		Inference: &model.Inference{Role: "errors", Engine: "custom", EngineTitle: "[click](https://evil.example) <img src=x> | ## big\n- row"}}
	table := sloTable([]model.SLO{slo}, false, nil)
	row := strings.Split(strings.TrimSpace(table), "\n")[2]
	if m := regexp.MustCompile(`(^|[^\\])[\[\]<#]`).FindString(row); m != "" {
		t.Errorf("the row carries %q unescaped: %s", m, row)
	}
	if strings.Count(row, " | ") != 5 || strings.Contains(row, "\n") {
		t.Errorf("the title adds a cell or a line: %s", row)
	}
	if !strings.Contains(row, `\[click\]`) {
		t.Errorf("the title is not shown escaped: %s", row)
	}
}
