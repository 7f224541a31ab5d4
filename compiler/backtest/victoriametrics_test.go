package backtest

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/internal/promserver"
	"github.com/inferslo/inferslo/spec"
)

// TestBacktestFindsTheKnownIncidentsInVictoriaMetrics reads the month of
// history from a VictoriaMetrics single-node server, through its
// Prometheus query API, and finds the incidents the Prometheus run finds.
func TestBacktestFindsTheKnownIncidentsInVictoriaMetrics(t *testing.T) {
	vmBin := os.Getenv("INFERSLO_VICTORIAMETRICS")
	if vmBin == "" {
		t.Skip("set INFERSLO_VICTORIAMETRICS to the victoria-metrics binary (CI builds it from .ci/tools/victoriametrics)")
	}
	if os.Getenv("INFERSLO_LONG") == "" {
		t.Skip("imports and replays a month of history; INFERSLO_LONG=1 runs it (CI's step of its own)")
	}
	h := newHistory()
	dir := t.TempDir()
	text := filepath.Join(dir, "history.prom")
	if err := h.write(text, true); err != nil {
		t.Fatal(err)
	}
	addr := promserver.FreeAddr(t)
	log, err := os.Create(filepath.Join(dir, "victoria-metrics.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(vmBin, "-storageDataPath="+filepath.Join(dir, "data"), "-retentionPeriod=100y",
		"-httpListenAddr="+addr, "-search.disableCache")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("victoria-metrics not ready after 60s:\n%s", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	f, err := os.Open(text)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/api/v1/import/prometheus", "text/plain", f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("import: HTTP %d", resp.StatusCode)
	}
	// Imported samples become searchable once flushed.
	if resp, err := http.Get(base + "/internal/force_flush"); err == nil {
		resp.Body.Close()
	}

	res, err := spec.Parse(spec.Source{Name: "fleet.yaml", Data: []byte(fleetSpec)})
	if err != nil || len(res.Set.SLOs) != 1 {
		t.Fatalf("spec: %v %v", err, res.Problems)
	}
	began := time.Now()
	rep, err := Run(context.Background(), res.Set, Options{Source: Source{URL: base}, From: h.start.Add(3 * 24 * time.Hour), To: h.end()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backtest from VictoriaMetrics: %s (read %s: %d requests, %d bytes, %d samples)", time.Since(began).Round(time.Millisecond),
		rep.Stats.Read.Round(time.Millisecond), rep.Stats.Requests, rep.Stats.BytesRead, rep.Stats.Samples)
	findsTheKnownIncidents(t, h, rep)
}
