package backtest

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestPeriodsStartAtUTCMidnightMondayAndTheFirst(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 12, 15, 4, 0, 0, time.UTC) // a Thursday
	cases := []struct{ kind, start, next string }{
		{"day", "2026-03-12T00:00:00Z", "2026-03-13T00:00:00Z"},
		{"week", "2026-03-09T00:00:00Z", "2026-03-16T00:00:00Z"},
		{"month", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"},
	}
	for _, c := range cases {
		s := periodStart(c.kind, at)
		if got := s.Format(time.RFC3339); got != c.start {
			t.Errorf("%s start: got %s, want %s", c.kind, got, c.start)
		}
		if got := periodNext(c.kind, s).Format(time.RFC3339); got != c.next {
			t.Errorf("%s next: got %s, want %s", c.kind, got, c.next)
		}
	}
}

// TestSumsWeighEvaluationsByTheirEvents: an hour of 10x traffic at a 1%
// error ratio outweighs an hour of 1x traffic at 10%, and the range is
// half-open.
func TestSumsWeighEvaluationsByTheirEvents(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var samples []*sample
	for i := 0; i < 120; i++ {
		ts := t0.Add(time.Duration(i) * time.Minute)
		if i < 60 {
			samples = append(samples, &sample{t: ts.UnixMilli(), n: 10, k: 0.1})
		} else {
			samples = append(samples, &sample{t: ts.UnixMilli(), n: 1, k: 0.1})
		}
	}
	n, k := sums(samples, t0, t0.Add(2*time.Hour))
	if want := (60*0.1 + 60*0.1) / (60*10 + 60*1.0); math.Abs(k/n-want) > 1e-12 {
		t.Errorf("error ratio %g, want %g", k/n, want)
	}
	n, _ = sums(samples, t0.Add(time.Hour), t0.Add(time.Hour+time.Minute))
	if n != 1 {
		t.Errorf("[1h, 1h1m) holds events %g, want the one sample at 1h", n)
	}
}

// TestReportJSONHasExactlyTheDocumentedFields: alerts and slos, RFC 3339
// times, null for an alert still firing, ratios as numbers.
func TestReportJSONHasExactlyTheDocumentedFields(t *testing.T) {
	t.Parallel()
	fired := time.Date(2026, 3, 11, 12, 44, 0, 0, time.UTC)
	sli, spent := 0.995, 0.25
	r := Report{
		Alerts: []Alert{{SLO: "fleet-errors", AlertName: "ErrorBudgetBurn", Severity: "page", Labels: map[string]string{"model_name": "model-a"}, FiredAt: fired}},
		SLOs:   []SLOReport{{SLO: "fleet-errors", Labels: map[string]string{"model_name": "model-a"}, SLI: &sli, BudgetSpent: &spent, Worst: []Period{{Kind: "hour"}}}},
		Stats:  Stats{Requests: 3},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"alerts":[{"slo":"fleet-errors","alertname":"ErrorBudgetBurn","severity":"page","labels":{"model_name":"model-a"},"firedAt":"2026-03-11T12:44:00Z","resolvedAt":null}],` +
		`"slos":[{"slo":"fleet-errors","labels":{"model_name":"model-a"},"sli":0.995,"budgetSpent":0.25}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
