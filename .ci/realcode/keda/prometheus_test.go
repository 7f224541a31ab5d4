package keda

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startPrometheus runs $INFERSLO_PROMETHEUS on 127.0.0.1, scraping target
// (if any) every second and evaluating the rule files every second, and
// returns its URL. The server stops with the test.
func startPrometheus(t *testing.T, target string, ruleFiles []string) string {
	t.Helper()
	bin := os.Getenv("INFERSLO_PROMETHEUS")
	if bin == "" {
		t.Skip("set INFERSLO_PROMETHEUS to a prometheus binary (CI builds one in .ci/bin)")
	}
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global: {scrape_interval: 1s, evaluation_interval: 1s}\n")
	if len(ruleFiles) > 0 {
		cfg.WriteString("rule_files:\n")
		for _, f := range ruleFiles {
			fmt.Fprintf(&cfg, "  - %q\n", f)
		}
	}
	if target != "" {
		fmt.Fprintf(&cfg, "scrape_configs:\n  - job_name: engines\n    static_configs: [{targets: [%q]}]\n", target)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
		if t.Failed() {
			if b, err := os.ReadFile(log.Name()); err == nil {
				t.Logf("prometheus log:\n%s", b)
			}
		}
	})
	server := "http://" + addr
	waitFor(t, time.Minute, "prometheus ready", func() bool {
		resp, err := http.Get(server + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return server
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// instantSamples is how many samples query returns now.
func instantSamples(ctx context.Context, server, query string) (int, error) {
	vs, err := instantValues(ctx, server, query)
	return len(vs), err
}

// instantValues are the sample values query returns now.
func instantValues(ctx context.Context, server, query string) ([]float64, error) {
	// KEDA asks for the value at the current second, cut to whole seconds
	// (RFC 3339): asking two seconds earlier makes sure its query, not just
	// a later one, finds a sample (a rate needs two scrapes in its range).
	at := time.Now().Add(-2 * time.Second).UTC().Format(time.RFC3339)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server+"/api/v1/query?query="+url.QueryEscape(query)+"&time="+at, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: status %s", query, body.Status)
	}
	var out []float64
	for _, r := range body.Data.Result {
		text, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v", query, r.Value[1])
		}
		out = append(out, v)
	}
	return out, nil
}
