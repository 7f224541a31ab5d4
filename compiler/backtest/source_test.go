package backtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/spec"
)

func fleetSet(t *testing.T) model.Set {
	t.Helper()
	res, err := spec.Parse(spec.Source{Name: "fleet.yaml", Data: []byte(fleetSpec)})
	if err != nil || len(res.Set.SLOs) != 1 {
		t.Fatalf("spec: %v %v", err, res.Problems)
	}
	return res.Set
}

// TestBacktestRefusesBadServersWithClearErrors runs the backtest against
// servers that misbehave: each run fails with an error saying what the
// server did, and returns no report.
func TestBacktestRefusesBadServersWithClearErrors(t *testing.T) {
	t.Parallel()
	set := fleetSet(t)
	series := `{"status":"success","data":[{"__name__":"vllm:request_success_total","namespace":"llm"}]}`
	cases := []struct {
		name    string
		handler http.HandlerFunc
		source  Source
		want    string
	}{
		{
			name: "a server answering slower than the timeout is given up on",
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(5 * time.Second):
				case <-r.Context().Done():
				}
			},
			source: Source{Timeout: 200 * time.Millisecond},
			want:   "did not answer within 200ms",
		},
		{
			name: "an answer larger than the limit is refused",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/series") {
					fmt.Fprint(w, series)
					return
				}
				fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[`+strings.Repeat(" ", 4096)+`]}}`)
			},
			source: Source{MaxResponse: 1024},
			want:   "more than the 1024 bytes allowed",
		},
		{
			name: "a page that is not the Prometheus API is named as such",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, "<html>not here</html>")
			},
			want: `answered HTTP 404, not a Prometheus API response: "<html>not here</html>"`,
		},
		{
			name: "the server's own error is passed on",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprint(w, `{"status":"error","errorType":"execution","error":"query timed out"}`)
			},
			want: `answered HTTP 422: "execution": "query timed out"`,
		},
		{
			name: "a selector matching more series than allowed is refused",
			handler: func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `{"status":"success","data":[{"a":"1"},{"a":"2"},{"a":"3"}]}`)
			},
			source: Source{MaxSeries: 2},
			want:   "matches more than 2 series",
		},
		{
			name: "a history past the sample limit is refused",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/series") {
					fmt.Fprint(w, series)
					return
				}
				start := r.FormValue("start")
				fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm:request_success_total","namespace":"llm","model_name":"a"},"values":[[%s,"1"]]}]}}`, start)
			},
			source: Source{MaxSamples: 1},
			want:   "more than 1 samples",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			src := c.source
			src.URL = srv.URL
			to := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
			rep, err := Run(context.Background(), set, Options{Source: src, From: to.Add(-time.Hour), To: to, Read: ReadRaw})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", err, c.want)
			}
			if rep != nil {
				t.Errorf("a failed run returned a report")
			}
		})
	}
}

// TestBacktestRefusesAnUnreachableServer names the address it could not reach.
func TestBacktestRefusesAnUnreachableServer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	to := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	_, err := Run(context.Background(), fleetSet(t), Options{Source: Source{URL: url}, From: to.Add(-time.Hour), To: to})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), url) {
		t.Fatalf("got %v, want connection refused naming %s", err, url)
	}
}

func TestParseTimeReadsRFC3339NowAndDurationsBack(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)
	cases := []struct{ in, want string }{
		{"2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"},
		{"now", "2026-03-31T12:00:00Z"},
		{"-30d", "2026-03-01T12:00:00Z"},
		{"-1h30m", "2026-03-31T10:30:00Z"},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in, now)
		if err != nil || got.Format(time.RFC3339) != c.want {
			t.Errorf("ParseTime(%q) = %s, %v; want %s", c.in, got.Format(time.RFC3339), err, c.want)
		}
	}
	if _, err := ParseTime("yesterday", now); err == nil || !strings.Contains(err.Error(), "valid: RFC 3339") {
		t.Errorf("ParseTime(yesterday): %v, want an error saying what is valid", err)
	}
}

func TestParsePeriodReadsMonthsAndQuartersFromLocalMidnight(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, in, from, to, err string
		offset                  int
	}{
		{"a month is its first day to the next month's", "2026-10", "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z", "", 0},
		{"february of a leap year has 29 days", "2024-02", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z", "", 0},
		{"a quarter is three months", "2026-Q3", "2026-07-01T00:00:00Z", "2026-10-01T00:00:00Z", "", 0},
		{"the running month ends now", "2026-11", "2026-11-01T00:00:00Z", "2026-11-28T12:00:00Z", "", 0},
		{"a month not begun is refused", "2026-12", "", "", "2026-12 has not begun", 0},
		{"a fifth quarter is not a period", "2026-Q5", "", "", `"2026-Q5" is not a period; valid: a month (2026-10) or a quarter (2026-Q4)`, 0},
		{"a day is not a period", "2026-10-03", "", "", "is not a period", 0},
		{"a month at UTC+05:30 starts the evening before in UTC", "2026-10", "2026-09-30T18:30:00Z", "2026-10-31T18:30:00Z", "", 19800},
		{"a quarter at UTC-05:00 starts five hours into its first day in UTC", "2026-Q1", "2026-01-01T05:00:00Z", "2026-04-01T05:00:00Z", "", -18000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to, err := ParsePeriod(tt.in, now, tt.offset)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || from.Format(time.RFC3339) != tt.from || to.Format(time.RFC3339) != tt.to {
				t.Fatalf("got %s to %s, %v; want %s to %s", from.Format(time.RFC3339), to.Format(time.RFC3339), err, tt.from, tt.to)
			}
		})
	}
}
