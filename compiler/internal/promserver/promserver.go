// Package promserver runs a real Prometheus binary for tests: over a TSDB
// folder of its own (one a test may have backfilled), on a free port of
// 127.0.0.1, stopped when the test ends; and reads its query API.
package promserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is one Prometheus process over Dir/data.
type Server struct {
	T   testing.TB
	Bin string
	// Dir holds the configuration, the log and the TSDB (Dir/data).
	Dir string
	// Global is the body of prometheus.yml's global section; empty is
	// {scrape_interval: 1m}.
	Global string
	// Config is more of prometheus.yml (rule_files, say) after its global
	// section.
	Config string
	// Flags are more command-line flags.
	Flags []string
	// Addr is host:port once started.
	Addr string
	cmd  *exec.Cmd
}

// FreeAddr is a port of 127.0.0.1 free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Start runs the server and waits until it is ready; it returns the base
// URL. A server once stopped starts again on a new port.
func (p *Server) Start() string {
	t := p.T
	t.Helper()
	cfg := filepath.Join(p.Dir, "prometheus.yml")
	global := p.Global
	if global == "" {
		global = "{scrape_interval: 1m}"
	}
	if err := os.WriteFile(cfg, []byte("global: "+global+"\n"+p.Config), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Addr = FreeAddr(t)
	log, err := os.OpenFile(filepath.Join(p.Dir, "prometheus.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	args := append([]string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(p.Dir, "data"),
		"--storage.tsdb.retention.time=10y", "--web.listen-address=" + p.Addr}, p.Flags...)
	p.cmd = exec.Command(p.Bin, args...)
	p.cmd.Dir = p.Dir
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	base := "http://" + p.Addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			p.Stop()
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("prometheus not ready after 60s:\n%s", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop interrupts the server and waits for it, killing it after 30s.
func (p *Server) Stop() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
	p.cmd = nil
}

// Run runs a tool (promtool) and fails the test with its output when it
// fails.
func Run(t testing.TB, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

// Sample is one series of an instant query's answer.
type Sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// Query runs an instant query now and returns the vector, or the error
// the server answered with.
func Query(base, q string) ([]Sample, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status    string `json:"status"`
		Error     string `json:"error"`
		ErrorType string `json:"errorType"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("HTTP %d: %s: %s", resp.StatusCode, body.ErrorType, body.Error)
	}
	if body.Data.ResultType != "vector" {
		return nil, nil
	}
	var out []Sample
	if err := json.Unmarshal(body.Data.Result, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// WaitFor polls ok every half second and fails the test after limit.
func WaitFor(t testing.TB, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", limit, what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
