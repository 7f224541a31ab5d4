package backtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler/httpconfig"
)

// TestBacktestThroughATenantGate reads the history through a gate that, as
// Mimir's and Cortex's with multi-tenancy on, refuses a request without the
// tenant header and the token: with --http-config's client the run reads
// the history; without it, the error says the server answered 401, and
// never prints the token.
func TestBacktestThroughATenantGate(t *testing.T) {
	if os.Getenv("INFERSLO_LONG") == "" {
		t.Skip("replays a month of history for the SLO's window; INFERSLO_LONG=1 runs it (CI's backtest step); compiler/httpconfig tests the client alone")
	}
	set := fleetSet(t)
	set.SLOs = set.SLOs[:1] // the gate is what is tested, not the replay
	history := hostileHistory(steady(func(ts []float64) []float64 { return ts }))
	gate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Scope-OrgID") != "inference" || r.Header.Get("Authorization") != "Bearer t0ken-of-tenant" {
			http.Error(w, "no org id", http.StatusUnauthorized)
			return
		}
		history(w, r)
	})
	cfg := filepath.Join(t.TempDir(), "http.yaml")
	if err := os.WriteFile(cfg, []byte("authorization: {credentials: t0ken-of-tenant}\nhttp_headers: {X-Scope-OrgID: {values: [inference]}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client, err := httpconfig.Client(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gate)
	defer srv.Close()
	to := hostileTo()
	from := to.Add(-time.Hour)
	run := func(src Source) (*Report, error) {
		src.URL = srv.URL
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return Run(ctx, set, Options{Source: src, From: from, To: to, Scratch: t.TempDir(), Read: ReadRaw})
	}
	rep, err := run(Source{Client: client})
	if err != nil {
		t.Fatalf("with the tenant and the token: %v", err)
	}
	if rep.Stats.Samples == 0 {
		t.Error("the run read no samples through the gate")
	}
	_, err = run(Source{})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("without them: error %v, want the server's 401 named", err)
	}
	if strings.Contains(err.Error(), "t0ken-of-tenant") {
		t.Error("the error prints the token")
	}
}
