package backtest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/query"
	"github.com/inferslo/inferslo/compiler/safetext"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
)

// Source reads raw series from a Prometheus-compatible HTTP API with
// query_range, in chunks small enough that no response, and nothing held
// at once, grows with the history: each request asks for at most
// PointsPerRequest points (series × steps) and 11,000 steps (Prometheus'
// own limit per series), and each response is read up to MaxResponse bytes.
type Source struct {
	// URL is the server's base URL (http://prometheus:9090, or a path
	// prefix such as Thanos' or Mimir's /prometheus).
	URL string
	// Step is the resolution the series are read at.
	Step time.Duration
	// Timeout bounds each request; default 2m.
	Timeout time.Duration
	// MaxResponse bounds each response body; default 64 MiB.
	MaxResponse int64
	// MaxSamples bounds the samples read in all; default 200 million.
	MaxSamples int64
	// MaxSeries bounds the series one selector may match; default 100,000.
	MaxSeries int
	// PointsPerRequest bounds series × steps per query_range; default 500,000.
	PointsPerRequest int
	// Client sends the requests; default an http.Client with Timeout.
	Client *http.Client
}

// maxSteps is the most steps Prometheus answers per series in one
// query_range.
const maxSteps = 11000

func (s Source) withDefaults() Source {
	s.Timeout = cmp.Or(s.Timeout, 2*time.Minute)
	s.MaxResponse = cmp.Or(s.MaxResponse, 64<<20)
	s.MaxSamples = cmp.Or(s.MaxSamples, 200_000_000)
	s.MaxSeries = cmp.Or(s.MaxSeries, 100_000)
	s.PointsPerRequest = cmp.Or(s.PointsPerRequest, 500_000)
	if s.Client == nil {
		s.Client = &http.Client{Timeout: s.Timeout, CheckRedirect: safetext.SameHostRedirects}
	}
	return s
}

// Stats says what reading the history cost.
type Stats struct {
	Requests  int   `json:"requests"`
	BytesRead int64 `json:"bytesRead"`
	Series    int   `json:"series"`
	Samples   int64 `json:"samples"`
	// Invalid counts the samples left out for being NaN, infinite or
	// negative: no counter or gauge backtest reads takes such a value.
	Invalid int64 `json:"invalidSamples"`
	// First is the earliest sample read (zero when none was).
	First time.Time `json:"-"`
	// Read and Replayed are the wall times of reading and of replaying.
	Read, Replayed time.Duration `json:"-"`
}

// loader appends what a Source reads, skipping samples a series already
// holds (two selectors of the rules may match the same series).
type loader struct {
	src   Source
	app   func(ctx context.Context) storage.Appender
	last  map[uint64]int64
	stats Stats
	// step is called after each request.
	step func()
	// selected holds the series the selector being loaded has answered,
	// for its series limit.
	selected map[uint64]bool
}

// plan counts the series each selector matches over [from, to], for
// chunking; it is one request per selector.
func (l *loader) plan(ctx context.Context, selectors []string, from, to time.Time) ([]int, error) {
	counts := make([]int, len(selectors))
	for i, sel := range selectors {
		q := url.Values{}
		q.Set("match[]", sel)
		q.Set("start", formatTime(from))
		q.Set("end", formatTime(to))
		q.Set("limit", strconv.Itoa(l.src.MaxSeries+1))
		var series []map[string]string
		if err := l.get(ctx, "/api/v1/series", q, &series); err != nil {
			return nil, err
		}
		if len(series) > l.src.MaxSeries {
			return nil, fmt.Errorf("%s matches more than %d series; valid: a selector narrowed in the spec, or a larger series limit", sel, l.src.MaxSeries)
		}
		counts[i] = len(series)
	}
	return counts, nil
}

// chunks is how many requests reading n series over [from, to] at step
// takes.
func (l *loader) chunks(n int, from, to time.Time, step time.Duration) (steps int, count int) {
	steps = min(maxSteps, max(1, l.src.PointsPerRequest/max(n, 1)))
	total := int(to.Sub(from)/step) + 1
	return steps, (total + steps - 1) / steps
}

// load reads selector's raw series over [from, to] in chunks of steps steps.
func (l *loader) load(ctx context.Context, selector string, steps int, from, to time.Time) error {
	return l.read(ctx, selector, steps, from, to, l.src.Step, func(m prommodel.Matrix, start, end time.Time) error {
		return l.append(ctx, selector, m, start, end)
	})
}

// read asks the server for expr over [from, to] at step, in chunks of
// steps steps, and hands each chunk's answer to add.
func (l *loader) read(ctx context.Context, expr string, steps int, from, to time.Time, step time.Duration, add func(m prommodel.Matrix, start, end time.Time) error) error {
	l.selected = map[uint64]bool{}
	span := time.Duration(steps-1) * step
	for start := from; !start.After(to); start = start.Add(span + step) {
		end := start.Add(span)
		if end.After(to) {
			end = to
		}
		q := url.Values{}
		q.Set("query", expr)
		q.Set("start", formatTime(start))
		q.Set("end", formatTime(end))
		q.Set("step", strconv.FormatFloat(step.Seconds(), 'f', -1, 64))
		var data struct {
			ResultType string           `json:"resultType"`
			Result     prommodel.Matrix `json:"result"`
		}
		if err := l.get(ctx, "/api/v1/query_range", q, &data); err != nil {
			return err
		}
		if data.ResultType != "matrix" {
			return fmt.Errorf("query_range %s: the server answered a %q, not a matrix", expr, data.ResultType)
		}
		if err := add(data.Result, start, end); err != nil {
			return err
		}
		if l.step != nil {
			l.step()
		}
	}
	return nil
}

func (l *loader) append(ctx context.Context, selector string, m prommodel.Matrix, from, to time.Time) error {
	app := l.app(ctx)
	lo, hi := from.UnixMilli(), to.UnixMilli()
	for _, ss := range m {
		if len(ss.Histograms) > 0 {
			app.Rollback()
			return fmt.Errorf("%s: native histogram samples are not read by backtest yet", selector)
		}
		b := labels.NewScratchBuilder(len(ss.Metric))
		for k, v := range ss.Metric {
			if err := query.CheckLabelSize(string(k), string(v)); err != nil {
				app.Rollback()
				return fmt.Errorf("query_range %s: the server answered a series with %w", selector, err)
			}
			b.Add(string(k), string(v))
		}
		b.Sort()
		lset := b.Labels()
		if lset.Get(query.MetricNameLabel) == "" {
			app.Rollback()
			return fmt.Errorf("%s: the server answered a series without a metric name: %s", selector, safetext.Quote(lset.String()))
		}
		h := lset.Hash()
		// The series count of the plan is the server's word; what
		// query_range answers is held to the same limit.
		if l.selected[h] = true; len(l.selected) > l.src.MaxSeries {
			app.Rollback()
			return fmt.Errorf("query_range %s: the server answered more than %d series; valid: a selector narrowed in the spec, or a larger series limit", selector, l.src.MaxSeries)
		}
		// Samples out of order are the server's error; sorted, none is lost.
		slices.SortStableFunc(ss.Values, func(a, b prommodel.SamplePair) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
		last, seen := l.last[h]
		if !seen {
			l.stats.Series++
			last = math.MinInt64
		}
		var ref storage.SeriesRef
		for _, p := range ss.Values {
			t := int64(p.Timestamp)
			// A sample outside what was asked for is the server's error;
			// dropping it keeps the series in order.
			if t <= last || t < lo || t > hi {
				continue
			}
			if v := float64(p.Value); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				l.stats.Invalid++
				continue
			}
			l.stats.Samples++
			if l.stats.Samples > l.src.MaxSamples {
				app.Rollback()
				return fmt.Errorf("the history holds more than %d samples; valid: a shorter --from/--to range, a coarser --step, or a larger --max-samples", l.src.MaxSamples)
			}
			var err error
			if ref, err = app.Append(ref, lset, t, float64(p.Value)); err != nil {
				app.Rollback()
				return fmt.Errorf("store %s: %w", safetext.Quote(lset.String()), err)
			}
			last = t
			if ft := time.UnixMilli(t); l.stats.First.IsZero() || ft.Before(l.stats.First) {
				l.stats.First = ft
			}
		}
		l.last[h] = last
	}
	if err := app.Commit(); err != nil {
		return fmt.Errorf("store samples: %w", err)
	}
	return nil
}

// apiError is Prometheus' error document.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

// get calls an API endpoint for the history and decodes its data into
// out, within the size and time limits.
func (l *loader) get(ctx context.Context, path string, q url.Values, out any) error {
	if err := l.call(ctx, path, q, out); err != nil {
		return fmt.Errorf("read history: %w", err)
	}
	return nil
}

// call calls an API endpoint and decodes its data into out, within the
// size and time limits; its errors name the server, not the purpose.
func (l *loader) call(ctx context.Context, path string, q url.Values, out any) error {
	u := strings.TrimSuffix(l.src.URL, "/") + path
	shown := safetext.URL(u)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(q.Encode()))
	if err != nil {
		return fmt.Errorf("%s is not a URL to ask", shown)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	l.stats.Requests++
	resp, err := l.src.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			if ue.Timeout() {
				return fmt.Errorf("%s did not answer within %s", shown, l.src.Timeout)
			}
			// url.Error quotes the URL as given, credentials and all.
			return fmt.Errorf("%s: %s", shown, safetext.Redact(ue.Err.Error()))
		}
		return fmt.Errorf("%s: %s", shown, safetext.Redact(err.Error()))
	}
	defer resp.Body.Close()
	if resp.ContentLength > l.src.MaxResponse {
		return fmt.Errorf("%s answered %d bytes, more than the %d allowed", shown, resp.ContentLength, l.src.MaxResponse)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, l.src.MaxResponse+1))
	l.stats.BytesRead += int64(len(body))
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("%s did not answer within %s", shown, l.src.Timeout)
		}
		return fmt.Errorf("%s: %s", shown, safetext.Redact(err.Error()))
	}
	if int64(len(body)) > l.src.MaxResponse {
		return fmt.Errorf("%s answered more than the %d bytes allowed", shown, l.src.MaxResponse)
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%s answered HTTP %d, not a Prometheus API response: %s", shown, resp.StatusCode, safetext.Quote(string(body)))
	}
	if r.Status != "success" {
		return fmt.Errorf("%s answered HTTP %d: %s: %s", shown, resp.StatusCode, safetext.Quote(r.ErrorType), safetext.Quote(r.Error))
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return fmt.Errorf("%s: the answer's data does not decode: %s", shown, safetext.Quote(err.Error()))
	}
	return nil
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', -1, 64)
}

// Instant evaluates expr at t through the API's /api/v1/query, over the
// same client, limits and error reporting as the history backtest reads:
// one HTTP path for every reading of a Prometheus-compatible server.
func (s Source) Instant(ctx context.Context, expr string, at time.Time) (prommodel.Vector, error) {
	return (&loader{src: s.withDefaults()}).instant(ctx, expr, at)
}

// instant is Instant, counted in the loader's stats.
func (l *loader) instant(ctx context.Context, expr string, at time.Time) (prommodel.Vector, error) {
	q := url.Values{}
	q.Set("query", expr)
	q.Set("time", formatTime(at))
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := l.call(ctx, "/api/v1/query", q, &data); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: the server answered a %s, not a vector", expr, safetext.Quote(data.ResultType))
	}
	var v prommodel.Vector
	if err := json.Unmarshal(data.Result, &v); err != nil {
		return nil, fmt.Errorf("query %s: the answer's result does not decode: %s", expr, safetext.Quote(err.Error()))
	}
	if len(v) > l.src.MaxSeries {
		return nil, fmt.Errorf("query %s: the server answered more than %d series", expr, l.src.MaxSeries)
	}
	for _, smp := range v {
		for k, val := range smp.Metric {
			if err := query.CheckLabelSize(string(k), string(val)); err != nil {
				return nil, fmt.Errorf("query %s: the server answered a series with %w", expr, err)
			}
		}
	}
	return v, nil
}
