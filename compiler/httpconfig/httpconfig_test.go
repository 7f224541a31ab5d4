package httpconfig

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A tenant gate as Mimir installs one: a request needs the tenant header
// and the token.
func tenantGate(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Scope-OrgID") != "inference" || r.Header.Get("Authorization") != "Bearer s3cret-token" {
			http.Error(w, "no org id", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTheConfiguredClientSendsTheTenantAndTheToken(t *testing.T) {
	srv := tenantGate(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "http.yaml")
	// A relative token file is read beside the configuration, as Prometheus does.
	if err := os.WriteFile(cfg, []byte("authorization:\n  credentials_file: token\nhttp_headers:\n  X-Scope-OrgID:\n    values: [inference]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file string
		status     int
	}{
		{"with the configuration the gate lets the request in", cfg, http.StatusOK},
		{"without it the gate answers 401", "", http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Client(tt.file, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("HTTP %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
}

func TestABadConfigurationIsRefusedWithoutItsValues(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"an unknown key":            "bearer_tokn: hunter2\n",
		"a value of the wrong type": "basic_auth: hunter2\n",
		"two kinds of credentials":  "basic_auth: {username: u, password: hunter2}\nauthorization: {credentials: hunter2}\n",
	} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, "http.yaml")
			if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Client(f, time.Second)
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "http.yaml") {
				t.Fatalf("error %q: it must name the file and never quote a value", err)
			}
		})
	}
}

func TestTheClientRefusesARedirectToAnotherHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.RedirectHandler(strings.Replace(other.URL, "127.0.0.1", "localhost", 1), http.StatusFound))
	t.Cleanup(srv.Close)
	c, err := Client("", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(srv.URL); err == nil || !strings.Contains(err.Error(), "another host") {
		t.Fatalf("error %v, want the redirect refused", err)
	}
}
