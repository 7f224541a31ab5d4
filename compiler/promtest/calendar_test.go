package promtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalendarMonthTestsPass runs the generated tests of a calendar-month SLO
// in promtool (in process when INFERSLO_PROMTOOL names none). Their expected
// annotations quote the budget left this month, so they pass only when the
// period ratio evaluates within promtool's 10,000 samples per query; a
// filter that costs samples at each of the month's 8,928 steps left it
// "unknown".
func TestCalendarMonthTestsPass(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Getenv("INFERSLO_PROMTOOL") == "" {
		t.Skip("replays a month's subquery at every evaluation in process; run without -short or with INFERSLO_PROMTOOL")
	}
	set := loadSet(t, "../../testdata/calendar/api-monthly.yaml")
	dir, tests := writeOut(t, set, nil)
	text := string(tests[0].Data)
	for _, want := range []string{
		"api-monthly: the page alert fires during a 20x burn",
		"Error budget left over calendar month: -1900%",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("test file lacks %q", want)
		}
	}
	testPath := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	// The burn group's expected alerts quote the budget left, so it alone
	// proves the period ratio evaluates; the other groups replay the same
	// month-long rules for what the other tests prove.
	mustPass(t, filepath.Dir(testPath), testPath, "api-monthly: the page alert fires during a 20x burn")
}

// A quarter's period steps by quarter-hour tiles to stay within promtool's
// 10,000 samples per query (92 days of five-minute tiles are 26,496): its
// generated tests pass in promtool and quote the budget left this quarter.
func TestCalendarQuarterTestsPass(t *testing.T) {
	t.Parallel()
	if testing.Short() && os.Getenv("INFERSLO_PROMTOOL") == "" {
		t.Skip("replays a quarter's subquery at every evaluation in process; run without -short or with INFERSLO_PROMTOOL")
	}
	month, err := os.ReadFile("../../testdata/calendar/api-monthly.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set := parseSet(t, strings.Replace(string(month), "duration: 1M", "duration: 1Q", 1))
	dir, tests := writeOut(t, set, nil)
	text := string(tests[0].Data)
	if want := "Error budget left over calendar quarter: -"; !strings.Contains(text, want) {
		t.Errorf("test file lacks %q", want)
	}
	testPath := filepath.Join(dir, filepath.FromSlash(tests[0].Path))
	mustPass(t, filepath.Dir(testPath), testPath, "api-monthly: the page alert fires during a 20x burn")
}
