// Package exporter serves synthetic vLLM metrics with client_golang, for
// the end-to-end test against a real Prometheus: the same metric names,
// labels (model_name, engine, finished_reason) and TTFT buckets as vLLM's
// V1 engine, driven at a steady request rate with a settable share of slow
// and failed requests.
package exporter

import (
	"context"
	"math"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// TTFTBuckets returns vLLM's time-to-first-token bounds
// (vllm/v1/metrics/loggers.py).
func TTFTBuckets() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
}

// Exporter is one vLLM server with several engine cores (the engine label).
type Exporter struct {
	reg      *prometheus.Registry
	ttft     *prometheus.HistogramVec
	requests *prometheus.CounterVec
	model    string
	engines  int

	mu sync.Mutex
	// slow and failed are the shares of requests that miss the TTFT
	// threshold and that fail; carry holds fractional requests between ticks.
	slow, failed      float64
	fast, slowLatency float64
	carry             []float64
}

// New registers vLLM's TTFT histogram and finished-requests counter for one
// model on engines engine cores; fast and slow are the TTFT values observed
// for good and slow requests.
func New(model string, engines int, fast, slow float64) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), model: model, engines: engines, fast: fast, slowLatency: slow, carry: make([]float64, engines)}
	e.ttft = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "vllm:time_to_first_token_seconds",
		Help:    "Histogram of time to first token in seconds.",
		Buckets: TTFTBuckets(),
	}, []string{"model_name", "engine"})
	e.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vllm:request_success_total",
		Help: "Count of successfully processed requests.",
	}, []string{"model_name", "engine", "finished_reason"})
	e.reg.MustRegister(e.ttft, e.requests)
	for i := 0; i < engines; i++ {
		eng := engineLabel(i)
		// vLLM creates every finished_reason child up front, so an error
		// series exists (at zero) before the first error.
		for _, r := range []string{"stop", "length", "abort", "error"} {
			e.requests.WithLabelValues(model, eng, r)
		}
		e.ttft.WithLabelValues(model, eng)
	}
	return e
}

func engineLabel(i int) string { return string(rune('0' + i)) }

// Handler serves the registry in the exposition formats Prometheus asks for.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{})
}

// Set changes the shares of slow and failed requests from now on.
func (e *Exporter) Set(slow, failed float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.slow, e.failed = slow, failed
}

// Run serves rps requests per second per engine core until ctx ends,
// spreading slow and failed requests evenly (no randomness, so runs repeat).
func (e *Exporter) Run(ctx context.Context, rps float64) {
	const tick = 50 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	var slowAcc, failAcc float64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.mu.Lock()
		for i := range e.carry {
			e.carry[i] += rps * tick.Seconds()
			n := math.Floor(e.carry[i])
			e.carry[i] -= n
			eng := engineLabel(i)
			for j := 0; j < int(n); j++ {
				failAcc += e.failed
				if failAcc >= 1 {
					failAcc--
					e.requests.WithLabelValues(e.model, eng, "error").Inc()
					continue
				}
				e.requests.WithLabelValues(e.model, eng, "stop").Inc()
				slowAcc += e.slow
				v := e.fast
				if slowAcc >= 1 {
					slowAcc--
					v = e.slowLatency
				}
				e.ttft.WithLabelValues(e.model, eng).Observe(v)
			}
		}
		e.mu.Unlock()
	}
}

// Serve serves the metrics on 127.0.0.1 and drives rps requests a second
// until the test ends; it returns the address to scrape.
func (e *Exporter) Serve(t testing.TB, rps float64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: e.Handler()}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); srv.Serve(ln) }()
	go func() { defer wg.Done(); e.Run(ctx, rps) }()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}
