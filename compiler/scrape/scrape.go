// Package scrape reads one /metrics exposition (a saved file or a live
// endpoint) into its series names and labels, bounded in time, bytes and
// series, so that a hostile or broken scrape is refused rather than read.
// lint --metrics, validate --metrics and compile --metrics all read scrapes
// here.
package scrape

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inferslo/inferslo/compiler/safetext"
	"github.com/inferslo/inferslo/spec/input"

	"github.com/inferslo/inferslo/compiler/query"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
)

// Limits bound one scrape. Zero fields take the defaults.
type Limits struct {
	// Timeout bounds a live fetch, connection to last byte.
	Timeout time.Duration
	// MaxBytes bounds the exposition as read: a file, a response body, and
	// again the text once gzip is undone.
	MaxBytes int64
	// MaxSeries bounds the series kept.
	MaxSeries int
	// Client sends a live fetch (credentials, TLS, tenant headers from
	// --http-config); nil: a plain client. Either refuses a redirect to
	// another host.
	Client *http.Client
}

// Default limits: a vLLM server with dozens of models exposes a few
// thousand series in well under a megabyte; the bounds leave a hundredfold
// room and keep the parse far below a gigabyte.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultMaxBytes  = 32 << 20
	DefaultMaxSeries = 200_000
)

func (l Limits) orDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxSeries <= 0 {
		l.MaxSeries = DefaultMaxSeries
	}
	return l
}

// Scrape is the series of one exposition, by metric name.
type Scrape struct {
	// Source names the scrape in messages: the file, or the URL with any
	// credentials redacted.
	Source string
	series map[string][]map[string]string
	count  int
}

// Load reads an exposition from a file or, for an http(s) URL, one GET.
func Load(ctx context.Context, src string, lim Limits) (*Scrape, error) {
	lim = lim.orDefaults()
	if IsURL(src) {
		name := safetext.URL(src)
		data, contentType, err := fetch(ctx, src, name, lim)
		if err != nil {
			return nil, err
		}
		return parse(name, data, contentType, lim)
	}
	data, err := input.ReadRegular(src, lim.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("read metrics %s: %w", src, err)
	}
	if data, err = gunzip(src, data, lim); err != nil {
		return nil, err
	}
	return parse(src, data, "", lim)
}

// IsURL tells a live endpoint from a file name.
func IsURL(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

func fetch(ctx context.Context, src, name string, lim Limits) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, "", fmt.Errorf("metrics url %s: not a valid URL", name)
	}
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	// Asked for explicitly, gzip reaches gunzip below, which bounds what it
	// inflates; the transport's own decompression would not be bounded
	// apart from the body.
	req.Header.Set("Accept-Encoding", "gzip")
	client := lim.Client
	if client == nil {
		client = &http.Client{CheckRedirect: safetext.SameHostRedirects}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("fetch metrics %s: %s", name, redactErr(err, src, name))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("fetch metrics %s: HTTP %d", name, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, lim.MaxBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("fetch metrics %s: %s", name, redactErr(err, src, name))
	}
	if int64(len(data)) > lim.MaxBytes {
		return nil, "", fmt.Errorf("fetch metrics %s: the response is larger than %d bytes", name, lim.MaxBytes)
	}
	if data, err = gunzip(name, data, lim); err != nil {
		return nil, "", err
	}
	return data, resp.Header.Get("Content-Type"), nil
}

// redactErr prints an error of net/http, which quotes the URL it was given,
// with the redacted URL instead.
func redactErr(err error, src, name string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return safetext.Redact(ue.Err.Error())
	}
	return safetext.Redact(strings.ReplaceAll(err.Error(), src, name))
}

// gunzip inflates gzip data up to MaxBytes; other data passes through.
func gunzip(name string, data []byte, lim Limits) ([]byte, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read metrics %s: %w", name, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, lim.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read metrics %s: %w", name, err)
	}
	if int64(len(out)) > lim.MaxBytes {
		return nil, fmt.Errorf("read metrics %s: inflates to more than %d bytes", name, lim.MaxBytes)
	}
	return out, nil
}

// parse streams the exposition through Prometheus's own scrape parsers,
// keeping names and labels only, so memory follows the series kept.
func parse(source string, data []byte, contentType string, lim Limits) (*Scrape, error) {
	openMetrics := strings.HasPrefix(contentType, "application/openmetrics-text") ||
		contentType == "" && (bytes.HasPrefix(data, []byte("# EOF")) || bytes.Contains(data, []byte("\n# EOF")))
	st := labels.NewSymbolTable()
	var p textparse.Parser
	if openMetrics {
		p = textparse.NewOpenMetricsParser(data, st)
	} else {
		p = textparse.NewPromParser(data, st, false)
	}
	s := &Scrape{Source: source, series: map[string][]map[string]string{}}
	// Label names and values repeat across series: keep one copy of each.
	intern := map[string]string{}
	str := func(v string) string {
		if c, ok := intern[v]; ok {
			return c
		}
		intern[v] = v
		return v
	}
	var ls labels.Labels
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// The parser quotes the text it stopped at: of a file that is
			// no scrape (an .env file), perhaps a secret.
			return nil, fmt.Errorf("parse metrics %s: %s", source, safetext.Printable(safetext.HideQuoted(err.Error())))
		}
		if entry != textparse.EntrySeries {
			continue
		}
		if s.count == lim.MaxSeries {
			return nil, fmt.Errorf("parse metrics %s: more than %d series", source, lim.MaxSeries)
		}
		// Prometheus' labels panic on a string over 16 MiB: a series
		// whose text is within the label bound holds no such string.
		if raw, _, _ := p.Series(); len(raw) > query.MaxLabelBytes {
			return nil, fmt.Errorf("parse metrics %s: series %d is %d bytes long: a label name or value over the limit of %d bytes", source, s.count+1, len(raw), query.MaxLabelBytes)
		}
		p.Labels(&ls)
		m := make(map[string]string, ls.Len())
		ls.Range(func(l labels.Label) {
			v := l.Value
			if l.Name == "le" {
				// Prometheus 3 stores bounds normalised: "1" as "1.0".
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					v = labels.FormatOpenMetricsFloat(f)
				}
			}
			m[str(l.Name)] = str(v)
		})
		name := m[query.MetricNameLabel]
		s.series[name] = append(s.series[name], m)
		s.count++
	}
	return s, nil
}

// Of returns the series of one metric name, each as its labels (the name
// under __name__). The maps are shared: read, never write.
func (s *Scrape) Of(name string) []map[string]string { return s.series[name] }

// Has tells whether the scrape holds a series of that name.
func (s *Scrape) Has(name string) bool { return len(s.series[name]) > 0 }

// Values lists the distinct values of a label over series, sorted; le
// values sort by number.
func Values(series []map[string]string, label string) []string {
	seen := map[string]bool{}
	var out []string
	for _, ls := range series {
		if v, ok := ls[label]; ok && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	if label == "le" {
		sort.Slice(out, func(i, j int) bool {
			a, _ := strconv.ParseFloat(out[i], 64)
			b, _ := strconv.ParseFloat(out[j], 64)
			return a < b
		})
	} else {
		sort.Strings(out)
	}
	return out
}

// Names lists the metric names, sorted.
func (s *Scrape) Names() []string {
	return slices.Sorted(maps.Keys(s.series))
}
