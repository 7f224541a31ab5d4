package backtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	irules "github.com/inferslo/inferslo/compiler/rules"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/spec"
)

// calendarSLO is a monthly or quarterly plain-OpenSLO SLO in a time zone.
func calendarSLO(t *testing.T, name, duration, zone string) model.SLO {
	t.Helper()
	doc := fmt.Sprintf(`apiVersion: openslo/v1
kind: SLO
metadata: {name: %s}
spec:
  service: api
  budgetingMethod: Occurrences
  timeWindow:
    - duration: %s
      isRolling: false
      calendar: {startTime: "2026-01-01 00:00:00", timeZone: %s}
  objectives:
    - target: 0.999
  indicator:
    metadata: {name: %s-sli}
    spec:
      ratioMetric:
        counter: true
        bad: {metricSource: {type: Prometheus, spec: {query: 'sum(http_requests_total{code=~"5.."})'}}}
        total: {metricSource: {type: Prometheus, spec: {query: sum(http_requests_total)}}}
`, name, duration, zone, name)
	res, err := spec.Parse(spec.Source{Name: name + ".yaml", Data: []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return res.Set.SLOs[0]
}

// A reported period is the period the SLO's own rules record: the start
// ParsePeriod gives at the specs' offset is the value of the rules'
// inferslo:period_start:timestamp an hour into it.
func TestAReportedPeriodIsTheOneTheRulesRecord(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, duration, zone, period string
	}{
		{"a UTC month", "1M", "UTC", "2026-03"},
		{"a month in Kolkata begins at 18:30 UTC the day before", "1M", "Asia/Kolkata", "2026-03"},
		{"a quarter in New York begins at 05:00 UTC", "1Q", "America/New_York", "2026-Q2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slo := calendarSLO(t, "api", tt.duration, tt.zone)
			set := model.Set{SLOs: []model.SLO{slo}}
			offset, err := PeriodOffset(set)
			if err != nil {
				t.Fatal(err)
			}
			from, to, err := ParsePeriod(tt.period, now, offset)
			if err != nil {
				t.Fatal(err)
			}
			files, err := irules.Build(set, nil)
			if err != nil {
				t.Fatal(err)
			}
			x, err := prom.IndexRules(files)
			if err != nil {
				t.Fatal(err)
			}
			h, err := prom.NewIndexedHarness(x, false, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			for _, at := range []time.Time{from.Add(time.Hour), to.Add(-time.Hour)} {
				since := at.Sub(prom.Epoch())
				if err := h.Eval(since); err != nil {
					t.Fatal(err)
				}
				for name, want := range map[string]time.Time{model.PeriodStart: from, model.PeriodEnd: to} {
					v, err := h.Query(model.Selector(name, slo, 0), since)
					if err != nil || len(v) != 1 {
						t.Fatalf("%s at %s: %v %v", name, at, v, err)
					}
					if got := time.Unix(int64(v[0].F), 0).UTC(); !got.Equal(want) {
						t.Errorf("at %s the rules record %s %s; the report's period has %s", at, name, got, want)
					}
				}
			}
		})
	}
}

func TestCalendarsInTwoZonesHaveNoPeriodInCommon(t *testing.T) {
	t.Parallel()
	set := model.Set{SLOs: []model.SLO{calendarSLO(t, "api-utc", "1M", "UTC"), calendarSLO(t, "api-india", "1M", "Asia/Kolkata")}}
	_, err := PeriodOffset(set)
	if err == nil || !strings.Contains(err.Error(), "SLO api-utc draws its calendar periods at UTC+00:00 (UTC) and SLO api-india at UTC+05:30 (Asia/Kolkata)") ||
		!strings.Contains(err.Error(), "valid: report the specs of each time zone separately") {
		t.Fatalf("got %v", err)
	}
	same := model.Set{SLOs: []model.SLO{calendarSLO(t, "a", "1M", "Asia/Kolkata"), calendarSLO(t, "b", "1Q", "Asia/Kolkata")}}
	if off, err := PeriodOffset(same); err != nil || off != 19800 {
		t.Fatalf("one zone: %d, %v; want 19800", off, err)
	}
}
