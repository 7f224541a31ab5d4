// Package promapi serves the read endpoints of Prometheus' HTTP API
// (series, query, query_range) over a replay's in-memory storage and
// Prometheus' own engine: tests and benchmarks of readers of history get a
// server that evaluates PromQL as Prometheus does, without a binary or a
// backfill.
package promapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// Server answers the API for rp's samples; Close stops it.
type Server struct {
	*httptest.Server
	// Queries counts the query and query_range requests answered.
	Queries atomic.Int64
}

// Serve starts a server on 127.0.0.1 over rp.
func Serve(rp *prom.Replay) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := s.answer(rp, r)
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": "bad_data", "error": err.Error()})
			return
		}
		w.Write(data)
	}))
	return s
}

// answer is one request's response body.
func (s *Server) answer(rp *prom.Replay, r *http.Request) ([]byte, error) {
	when := func(k string) (time.Time, error) {
		v, err := strconv.ParseFloat(r.FormValue(k), 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("%s: %w", k, err)
		}
		return time.UnixMilli(int64(v * 1000)).UTC(), nil
	}
	wrap := func(data any) ([]byte, error) {
		return json.Marshal(map[string]any{"status": "success", "data": data})
	}
	switch r.URL.Path {
	case "/api/v1/series":
		from, err := when("start")
		if err != nil {
			return nil, err
		}
		to, err := when("end")
		if err != nil {
			return nil, err
		}
		ls, err := rp.Series(r.FormValue("match[]"), from, to)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]string, len(ls))
		for i, l := range ls {
			out[i] = l.Map()
		}
		return wrap(out)
	case "/api/v1/query", "/api/v1/query_range":
		s.Queries.Add(1)
		var start, end time.Time
		var step time.Duration
		var err error
		if r.URL.Path == "/api/v1/query" {
			if end, err = when("time"); err != nil {
				return nil, err
			}
		} else {
			if start, err = when("start"); err != nil {
				return nil, err
			}
			if end, err = when("end"); err != nil {
				return nil, err
			}
			sec, err := strconv.ParseFloat(r.FormValue("step"), 64)
			if err != nil || sec <= 0 {
				return nil, fmt.Errorf("step %q is not a positive number of seconds", r.FormValue("step"))
			}
			step = time.Duration(sec * float64(time.Second))
		}
		var body []byte
		err = rp.Query(r.FormValue("query"), start, end, step, func(v parser.Value) error {
			var err error
			body, err = wrap(map[string]any{"resultType": v.Type(), "result": v})
			return err
		})
		return body, err
	}
	return nil, fmt.Errorf("%s is not served", r.URL.Path)
}
