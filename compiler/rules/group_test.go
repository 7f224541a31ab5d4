package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// TestGroupRefusesAnIndicatorThatDidNotResolve holds Group to an error,
// not a panic, for an SLO whose indicator has no events: a caller's check
// of a spec with errors (validate --ruler) builds groups of such SLOs.
func TestGroupRefusesAnIndicatorThatDidNotResolve(t *testing.T) {
	slo := model.SLO{Name: "s", Service: model.Service{Name: "svc"}, Objective: model.NewDecimal(99, 100),
		SLI: model.SLI{Counter: true}, Window: 28 * 24 * time.Hour, Evaluation: time.Minute, ScrapeInterval: 15 * time.Second}
	_, err := Group(slo, nil)
	if err == nil || !strings.Contains(err.Error(), "no total events") {
		t.Fatalf("Group of an SLO without events: error %v, want one naming the missing total events", err)
	}
}
