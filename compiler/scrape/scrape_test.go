package scrape

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenMetricsScrapesParseWithPrometheus3LeForms(t *testing.T) {
	om := "# TYPE vllm:request_success counter\n" +
		"vllm:request_success_total{finished_reason=\"stop\"} 3 # {trace_id=\"a\"} 1 1.7e9\n" +
		"vllm:request_success_created{finished_reason=\"stop\"} 1.7e9\n" +
		"# TYPE vllm:time_to_first_token_seconds histogram\n" +
		"vllm:time_to_first_token_seconds_bucket{le=\"1\"} 2\n" +
		"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 3\n" +
		"vllm:time_to_first_token_seconds_count 3\n" +
		"vllm:time_to_first_token_seconds_sum 1.5\n" +
		"# EOF\n"
	s, err := parseBytes("om", []byte(om), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Of("vllm:request_success_total")) != 1 {
		t.Fatalf("series: %v", s.Names())
	}
	les := Values(s.Of("vllm:time_to_first_token_seconds_bucket"), "le")
	if !slices.Equal(les, []string{"1.0", "+Inf"}) {
		t.Fatalf("le values %q, want the Prometheus 3 forms 1.0 and +Inf in bound order", les)
	}
}

func TestTextScrapesKeepEveryLabel(t *testing.T) {
	text := "# TYPE tgi_request_failure counter\ntgi_request_failure{err=\"overloaded\"} 4\ntgi_request_failure{err=\"validation\"} 1\n"
	s, err := parseBytes("t", []byte(text), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := Values(s.Of("tgi_request_failure"), "err"); !slices.Equal(got, []string{"overloaded", "validation"}) {
		t.Fatalf("err values %q", got)
	}
	if s.count != 2 {
		t.Fatalf("%d series, want 2", s.count)
	}
}

func TestAURLIsFetchedOnceAndTimesOut(t *testing.T) {
	data := []byte("vllm:num_requests_waiting{model_name=\"m\"} 4\n")
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(data)
	}))
	defer srv.Close()
	s, err := Load(t.Context(), srv.URL+"/metrics", Limits{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if hits != 1 || len(s.Of("vllm:num_requests_waiting")) != 1 {
		t.Fatalf("%d requests, names %v", hits, s.Names())
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer slow.Close()
	if _, err := Load(t.Context(), slow.URL, Limits{Timeout: 50 * time.Millisecond}); err == nil {
		t.Fatal("a scrape that never answers did not time out")
	}
}

func gzipped(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func TestHostileScrapesAreRefusedWithinTheirBounds(t *testing.T) {
	// A small gzip body that inflates far beyond the bound.
	bomb := gzipped(t, bytes.Repeat([]byte("a 1\n"), 4<<20))
	many := []byte(strings.Repeat("m{a=\"b\"} 1\n", 1000))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	}))
	defer srv.Close()
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(many) }))
	defer elsewhere.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/metrics", http.StatusFound)
	}))
	defer redirect.Close()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.prom")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x 1\n"), 1<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		load func() error
		want string
	}{
		{"a gzip response inflating past the bound is refused", func() error {
			_, err := Load(t.Context(), srv.URL, Limits{MaxBytes: 1 << 20})
			return err
		}, "inflates to more than"},
		{"a gzip file inflating past the bound is refused", func() error {
			_, err := parseBytes("bomb.gz", bomb, Limits{MaxBytes: 1 << 20})
			return err
		}, "inflates to more than"},
		{"more series than the bound are refused", func() error {
			_, err := parseBytes("many", many, Limits{MaxSeries: 999})
			return err
		}, "more than 999 series"},
		{"a file above the size bound is refused", func() error {
			_, err := Load(t.Context(), big, Limits{MaxBytes: 1000})
			return err
		}, "larger than"},
		{"a label value over 16 MiB, which Prometheus' labels panic on, is refused", func() error {
			_, err := parseBytes("huge", []byte("m{a=\""+strings.Repeat("v", 17<<20)+"\"} 1\n"), Limits{})
			return err
		}, "over the limit of 1048576 bytes"},
		{"an OpenMetrics label value over 16 MiB is refused", func() error {
			_, err := parseBytes("huge", []byte("m{a=\""+strings.Repeat("v", 17<<20)+"\"} 1\n# EOF\n"), Limits{})
			return err
		}, "over the limit of 1048576 bytes"},
		{"a label name over the bound is refused", func() error {
			_, err := parseBytes("huge", []byte("m{"+strings.Repeat("n", 2<<20)+"=\"v\"} 1\n"), Limits{})
			return err
		}, "over the limit of 1048576 bytes"},
		{"a redirect to another host is refused", func() error {
			_, err := Load(t.Context(), redirect.URL, Limits{})
			return err
		}, "refused a redirect to another host"},
		{"a file that is no scrape is refused without quoting its text", func() error {
			_, err := parseBytes(".env", []byte("OPENAI_API_KEY=sk-live-abcdef\n"), Limits{})
			if err != nil && strings.Contains(err.Error(), "sk-live") {
				return fmt.Errorf("quoted the secret: %w", err)
			}
			return err
		}, "parse metrics .env"},
		{"a named pipe is refused, not read", func() error {
			_, err := Load(t.Context(), fifo, Limits{})
			return err
		}, "not a regular file"},
		{"a device is refused, not read", func() error {
			_, err := Load(t.Context(), "/dev/zero", Limits{})
			return err
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.load()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestCredentialsInAURLNeverReachAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	for _, src := range []string{
		strings.Replace(srv.URL, "http://", "http://admin:s3cret@", 1) + "/metrics?token=s3cret",
		"http://admin:s3cret@127.0.0.1:1/metrics?token=s3cret",
	} {
		_, err := Load(t.Context(), src, Limits{Timeout: 2 * time.Second})
		if err == nil {
			t.Fatalf("%s: no error", src)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("the error shows the secret: %v", err)
		}
		if !strings.Contains(err.Error(), "xxxxx") {
			t.Fatalf("the error does not name the redacted URL: %v", err)
		}
	}
}

// BenchmarkParse8MB reads an 8 MB exposition of short series; its B/op is
// the memory a scrape of that size costs.
func BenchmarkParse8MB(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 8<<20; i++ {
		fmt.Fprintf(&buf, "vllm:time_to_first_token_seconds_bucket{engine=\"0\",model_name=\"m%d\",le=\"%d\"} 1\n", i/20, i%20)
	}
	data := buf.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseBytes("bench", data, Limits{MaxBytes: 16 << 20, MaxSeries: 1 << 20}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParse feeds arbitrary expositions to the parser: it never panics,
// keeps at most MaxSeries series and at most as many as the input has lines.
func FuzzParse(f *testing.F) {
	f.Add([]byte("vllm:num_requests_waiting{model_name=\"m\"} 4\n"))
	f.Add([]byte("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 3\n# EOF\n"))
	f.Add(gzipped(f, []byte("a{b=\"c\"} 1\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxBytes: 1 << 16, MaxSeries: 64}
		s, err := parseBytes("fuzz", data, lim)
		if err != nil {
			return
		}
		n := 0
		for _, name := range s.Names() {
			n += len(s.Of(name))
		}
		if n != s.count || n > lim.MaxSeries || n > bytes.Count(data, []byte("\n"))+1 && len(data) > 0 && data[0] != 0x1f {
			t.Fatalf("%d series kept (count %d) from %d bytes", n, s.count, len(data))
		}
	})
}

// parseBytes reads an exposition held in memory, gzipped or not, as Load
// reads a file's bytes; source names it in messages.
func parseBytes(source string, data []byte, lim Limits) (*Scrape, error) {
	lim = lim.orDefaults()
	data, err := gunzip(source, data, lim)
	if err != nil {
		return nil, err
	}
	return parse(source, data, "", lim)
}
