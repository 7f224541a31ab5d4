package backtest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/inferslo/inferslo/compiler/model"
)

// hostileTo ends every hostile run.
func hostileTo() time.Time { return time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) }

// hostileHistory answers /series with one series and /query_range with one series
// of the queried metric whose samples values writes for the requested steps.
func hostileHistory(values func(start, end, step float64) [][2]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/series") {
			fmt.Fprint(w, `{"status":"success","data":[{"__name__":"vllm:request_success_total","model_name":"a"}]}`)
			return
		}
		name, _, _ := strings.Cut(r.FormValue("query"), "{")
		start, _ := strconv.ParseFloat(r.FormValue("start"), 64)
		end, _ := strconv.ParseFloat(r.FormValue("end"), 64)
		step, _ := strconv.ParseFloat(r.FormValue("step"), 64)
		var pts []string
		for _, p := range values(start, end, step) {
			pts = append(pts, fmt.Sprintf("[%s,%q]", p[0], p[1]))
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":%q,"model_name":"a","namespace":"llm"},"values":[%s]}]}}`,
			name, strings.Join(pts, ","))
	}
}

// steady is a counter growing by one a step, in the order of ts.
func steady(order func([]float64) []float64) func(start, end, step float64) [][2]string {
	return func(start, end, step float64) [][2]string {
		var ts []float64
		for t := start; t <= end; t += step {
			ts = append(ts, t)
		}
		var out [][2]string
		for _, t := range order(ts) {
			out = append(out, [2]string{strconv.FormatFloat(t, 'f', -1, 64), strconv.FormatFloat(t-1.7e9, 'f', -1, 64)})
		}
		return out
	}
}

// TestBacktestAgainstHostileServers runs the backtest against servers that
// misbehave on purpose, with the --prometheus URL carrying a password:
// each run ends within its deadline, fails with an error that names what
// the server did without the password, a terminal escape or more than a
// bounded excerpt of what the server said, or succeeds with every sample
// it left out counted.
func TestBacktestAgainstHostileServers(t *testing.T) {
	t.Parallel()
	set := fleetSet(t)
	other := httptest.NewServer(hostileHistory(steady(func(ts []float64) []float64 { return ts })))
	defer other.Close()
	escapes := "\x1b[2J\x1b]0;pwned\x07\nfleet-errors  model_name=a  100%  0%\n"
	cases := []struct {
		name    string
		handler http.HandlerFunc
		source  Source
		from    time.Time
		to      time.Time
		want    string
	}{
		{name: "a non-API answer of 30 MB with terminal escapes is cut and quoted",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(escapes))
				w.Write(bytes.Repeat([]byte("A"), 30<<20))
			},
			want: "not a Prometheus API response"},
		{name: "a 4xx API error with escapes and forged table rows is quoted",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"status":"error","errorType":"bad_data","error":%q}`, escapes+strings.Repeat("x", 1<<20))
			},
			want: "answered HTTP 400"},
		{name: "an answer past the size limit is refused",
			handler: func(w http.ResponseWriter, r *http.Request) { w.Write(bytes.Repeat([]byte(" "), 4096)) },
			source:  Source{MaxResponse: 1024}, want: "more than the 1024 bytes allowed"},
		{name: "a server that never answers is given up on",
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(time.Second):
				case <-r.Context().Done():
				}
			},
			source: Source{Timeout: 200 * time.Millisecond}, want: "did not answer within 200ms"},
		{name: "an empty history is named as such",
			handler: hostileHistory(func(_, _, _ float64) [][2]string { return nil }),
			want:    "no samples of the rules' series"},
		{name: "a redirect to another host is refused",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
			},
			want: "refused a redirect to another host"},
		{name: "a label value over 16 MiB is refused, not a panic",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/series") {
					fmt.Fprint(w, `{"status":"success","data":[{"__name__":"m"}]}`)
					return
				}
				fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"m","x":"%s"},"values":[[%s,"1"]]}]}}`,
					strings.Repeat("v", 17<<20), r.FormValue("start"))
			},
			source: Source{MaxResponse: 32 << 20}, want: "exceeds the limit of 1048576 bytes"},
		{name: "query_range answering more series than the limit is refused though /series said one",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/series") {
					fmt.Fprint(w, `{"status":"success","data":[{"__name__":"m"}]}`)
					return
				}
				var res []string
				for i := range 50 {
					res = append(res, fmt.Sprintf(`{"metric":{"__name__":"m","i":"%d"},"values":[[%s,"1"]]}`, i, r.FormValue("start")))
				}
				fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[%s]}}`, strings.Join(res, ","))
			},
			source: Source{MaxSeries: 10}, want: "the server answered more than 10 series"},
		{name: "--to in the future is refused",
			handler: hostileHistory(steady(func(ts []float64) []float64 { return ts })),
			from:    time.Now().Add(-time.Hour), to: time.Now().Add(48 * time.Hour), want: "is in the future"},
		{name: "--from 100000 days back is refused",
			handler: hostileHistory(steady(func(ts []float64) []float64 { return ts })),
			from:    hostileTo().Add(-100000 * 24 * time.Hour), want: "longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from, to := c.from, c.to
			if to.IsZero() {
				to = hostileTo()
			}
			if from.IsZero() {
				from = to.Add(-time.Hour)
			}
			got := runHostile(t, set, c.handler, c.source, from, to)
			if got.err == nil || !strings.Contains(got.err.Error(), c.want) {
				t.Fatalf("error %.300q, want one containing %q", fmt.Sprint(got.err), c.want)
			}
			msg := got.err.Error()
			if strings.Contains(msg, "s3cret") || strings.ContainsAny(msg, "\x1b\x07\n\r") || len(msg) > 2000 {
				t.Errorf("the error leaks the password, a control character or %d bytes: %.300q", len(msg), msg)
			}
			if got.rep != nil {
				t.Error("a failed run returned a report")
			}
		})
	}
}

type hostileRun struct {
	rep *Report
	err error
}

// runHostile runs one backtest against handler, its URL carrying a
// password, and fails the test if the run outlasts 60 seconds.
func runHostile(t *testing.T, set model.Set, handler http.Handler, src Source, from, to time.Time) hostileRun {
	t.Helper()
	srv := httptest.NewServer(handler)
	defer srv.Close()
	src.URL = strings.Replace(srv.URL, "http://", "http://admin:s3cret@", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, set, Options{Source: src, From: from, To: to, Scratch: t.TempDir(), Read: ReadRaw})
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("the run took %s", d)
	}
	return hostileRun{rep, err}
}

// recorder is the storage a loader appends to, keeping what it is given.
type recorder struct {
	storage.Appender
	samples []float64
	times   []int64
}

func (r *recorder) Append(ref storage.SeriesRef, _ labels.Labels, t int64, v float64) (storage.SeriesRef, error) {
	r.times, r.samples = append(r.times, t), append(r.samples, v)
	return ref, nil
}
func (r *recorder) Commit() error   { return nil }
func (r *recorder) Rollback() error { return nil }

// TestTheLoaderLeavesOutInvalidSamplesAndSortsTheRest reads one hour from
// servers answering samples that no counter takes, or out of order: the
// invalid ones are counted and reported, and every valid one is stored in
// time order.
func TestTheLoaderLeavesOutInvalidSamplesAndSortsTheRest(t *testing.T) {
	t.Parallel()
	inOrder := func(ts []float64) []float64 { return ts }
	reversed := func(ts []float64) []float64 {
		for i, j := 0, len(ts)-1; i < j; i, j = i+1, j-1 {
			ts[i], ts[j] = ts[j], ts[i]
		}
		return ts
	}
	poisoned := func(start, end, step float64) [][2]string {
		out := steady(inOrder)(start, end, step)
		for i := range out {
			if i%4 == 1 {
				out[i][1] = []string{"NaN", "+Inf", "-3", "-Inf"}[(i/4)%4]
			}
		}
		return out
	}
	for _, c := range []struct {
		name            string
		values          func(start, end, step float64) [][2]string
		stored, invalid int
	}{
		{"samples in order are all stored", steady(inOrder), 61, 0},
		{"samples in reverse order are sorted and all stored", steady(reversed), 61, 0},
		{"NaN, infinite and negative samples are left out and counted", poisoned, 46, 15},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(hostileHistory(c.values))
			defer srv.Close()
			rec := &recorder{}
			l := &loader{src: Source{URL: srv.URL, Step: time.Minute}.withDefaults(), app: func(context.Context) storage.Appender { return rec }, last: map[uint64]int64{}}
			to := hostileTo()
			if err := l.load(t.Context(), "vllm:request_success_total", 1000, to.Add(-time.Hour), to); err != nil {
				t.Fatal(err)
			}
			if len(rec.samples) != c.stored || l.stats.Invalid != int64(c.invalid) {
				t.Fatalf("stored %d samples and counted %d invalid, want %d and %d", len(rec.samples), l.stats.Invalid, c.stored, c.invalid)
			}
			if !slices.IsSorted(rec.times) {
				t.Error("samples stored out of order")
			}
			for _, v := range rec.samples {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Errorf("stored %v", v)
				}
			}
			var b strings.Builder
			if err := (&Report{Stats: l.stats}).WriteTable(&b); err != nil {
				t.Fatal(err)
			}
			if said := strings.Contains(b.String(), "NaN, infinite or negative"); said != (c.invalid > 0) {
				t.Errorf("the table reports invalid samples: %v, want %v", said, c.invalid > 0)
			}
		})
	}
}
