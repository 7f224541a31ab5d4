// Package promserver runs a real Prometheus server for tests: on
// 127.0.0.1, over a folder of its own, stopped when the test ends, its
// log's last lines shown when the test failed.
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

// Start runs bin with config (a prometheus.yml, written into dir with the
// TSDB beside it) and returns its base URL once it is ready. Rule files
// named in config are relative to dir.
func Start(t testing.TB, bin, dir, config string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logFile.Close()
		if t.Failed() {
			if log, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("prometheus log of %s (last lines):\n%s", dir, Tail(string(log), 8))
			}
		}
	})
	base := "http://" + addr
	WaitFor(t, 60*time.Second, "prometheus ready", func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base
}

// FreeAddr is a free TCP address on 127.0.0.1.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
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

// Tail is the last n lines of s, each cut at 400 bytes.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > 400 {
			lines[i] = l[:400] + " ..."
		}
	}
	return strings.Join(lines, "\n")
}
