package promtest

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
)

// promtool starts every test at the Unix epoch, a Thursday at midnight: a
// maintenance window open then would leave the tests' burns out and fail
// them. Each test of such a service starts once its windows stay closed
// for the test's span, and passes; a service whose windows never close for
// that long is refused.
func TestTheTestsOfAServiceWithMaintenanceStartOutsideItsWindows(t *testing.T) {
	t.Parallel()
	slo := ttftSLO(t)
	slo.Alerting.Maintenance = []model.Maintenance{
		{Minute: 0, Days: []int{4}, Duration: 3 * time.Hour},                       // Thursdays 00:00-03:00 UTC
		{Start: time.Unix(3*3600, 0).UTC(), End: time.Unix(3*3600+30*60, 0).UTC()}, // then half an hour more
		{Minute: 23 * 60, Days: []int{4}, Duration: time.Hour, Offset: 2 * 3600},   // 21:00-22:00 UTC, too late to matter
	}
	set := model.Set{SLOs: []model.SLO{slo}}
	dir, tests := writeOut(t, set, nil)
	text := string(tests[0].Data)
	if n := strings.Count(text, `start_timestamp: "1970-01-01T03:30:00Z"`); n == 0 || n != strings.Count(text, "- name: ") {
		t.Fatalf("%d tests start at 03:30, want every one:\n%s", n, text)
	}
	path := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	// Every group starts at the same time (checked above): a page that
	// fires and one that stays silent from there prove the start clears
	// the windows both ways.
	mustPass(t, filepath.Dir(path), path, "chat-ttft: the page alert fires during a 20x burn", "chat-ttft: the page alert is silent at half the budget rate")

	slo.Alerting.Maintenance = []model.Maintenance{{Duration: 21 * time.Hour}}
	if _, err := build(model.Set{SLOs: []model.SLO{slo}}); err == nil || !strings.Contains(err.Error(), "leave no 6h closed within a week") {
		t.Fatalf("got %v, want a service never closed for 6h refused", err)
	}
}
