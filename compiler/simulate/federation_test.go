package simulate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/internal/exporter"
	"github.com/inferslo/inferslo/compiler/internal/promserver"
	"github.com/inferslo/inferslo/compiler/model"
	"github.com/inferslo/inferslo/compiler/render"
	irules "github.com/inferslo/inferslo/compiler/rules"
)

// TestAFederatedViewShowsEachClusterAndPagesOnlyTheBurningOne runs two
// Prometheus servers with a cluster external label, each scraping its own
// engine and evaluating the rules `compile --external-labels cluster`
// writes, federated into a third, as a global view is built. Cluster a
// serves every request slowly and fails half, cluster b is healthy. The page fires for a only,
// once per SLO, and every dashboard query evaluates on the global server
// with each SLO's series carrying its cluster.
func TestAFederatedViewShowsEachClusterAndPagesOnlyTheBurningOne(t *testing.T) {
	bin := os.Getenv("INFERSLO_PROMETHEUS")
	if bin == "" {
		t.Skip("set INFERSLO_PROMETHEUS to a prometheus binary to run the federation test")
	}
	if os.Getenv("INFERSLO_LONG") == "" {
		t.Skip("runs three real Prometheus servers for about a minute; INFERSLO_LONG=1 runs it (CI's step of its own)")
	}
	set := e2eSLOs(t)
	out, err := compiler.Compile(set, compiler.Options{ExternalLabels: []string{"cluster"}})
	if err != nil {
		t.Fatal(err)
	}
	var rules []byte
	var dashboards []string
	for _, f := range out.Files {
		switch {
		case f.Path == irules.Path("e2e"):
			rules = f.Data
		case strings.HasSuffix(f.Path, ".json") && strings.HasPrefix(f.Path, "grafana/"):
			dashboards = append(dashboards, f.Path)
		}
	}
	if rules == nil || len(dashboards) < 2 {
		t.Fatalf("compile wrote no rule file or fewer than two dashboards (%d files)", len(out.Files))
	}
	root := t.TempDir()
	clusters := map[string]string{}
	for _, c := range []struct {
		name          string
		slow, failing float64
	}{{"a", 1, 0.5}, {"b", 0.005, 0.005}} {
		exp := exporter.New("llama-3-8b", 2, 0.1, 0.75)
		exp.Set(c.slow, c.failing)
		engine := exp.Serve(t, 100)
		dir := filepath.Join(root, c.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "e2e.rules.yaml"), rules, 0o644); err != nil {
			t.Fatal(err)
		}
		clusters[c.name] = (&promserver.Server{T: t, Bin: bin, Dir: dir,
			Global: fmt.Sprintf("{scrape_interval: 1s, evaluation_interval: 1s, external_labels: {cluster: %s}}", c.name),
			Config: fmt.Sprintf("rule_files: [e2e.rules.yaml]\nscrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: [%q]}]\n", engine)}).Start()
	}
	globalDir := filepath.Join(root, "global")
	if err := os.MkdirAll(globalDir, 0o755); err != nil {
		t.Fatal(err)
	}
	global := (&promserver.Server{T: t, Bin: bin, Dir: globalDir, Global: "{scrape_interval: 1s}", Config: fmt.Sprintf(`scrape_configs:
  - job_name: federate
    honor_labels: true
    metrics_path: /federate
    params: {'match[]': ['{__name__=~".+",job!="federate"}']}
    static_configs: [{targets: [%q, %q]}]
`, strings.TrimPrefix(clusters["a"], "http://"), strings.TrimPrefix(clusters["b"], "http://"))}).Start()

	pages := `ALERTS{alertname="` + model.AlertBurn + `",severity="page",alertstate="firing"}`
	var firing []promserver.Sample
	t.Cleanup(func() {
		if t.Failed() {
			for name, base := range clusters {
				a, err := promserver.Query(base, `ALERTS`)
				t.Logf("cluster %s alerts: %v %v", name, a, err)
				r, err := promserver.Query(base, model.ErrorRatio)
				t.Logf("cluster %s ratios: %v %v", name, r, err)
			}
		}
	})
	promserver.WaitFor(t, 120*time.Second, "a page for every SLO of cluster a in the global view", func() bool {
		firing, err = promserver.Query(global, pages)
		if err != nil {
			t.Fatal(err)
		}
		slos := map[string]bool{}
		for _, s := range firing {
			slos[s.Metric["slo"]] = true
		}
		return len(slos) == len(set.SLOs)
	})
	// A few more evaluations: cluster b must stay quiet.
	time.Sleep(5 * time.Second)
	if firing, err = promserver.Query(global, pages); err != nil {
		t.Fatal(err)
	}
	perSLO := map[string]int{}
	for _, s := range firing {
		if s.Metric["cluster"] != "a" {
			t.Errorf("a page in cluster %q: %v", s.Metric["cluster"], s.Metric)
		}
		perSLO[s.Metric["slo"]+"/"+s.Metric["burn_tier"]]++
	}
	for k, n := range perSLO {
		if n != 1 {
			t.Errorf("%s: %d firing pages of one tier in the global view, want 1", k, n)
		}
	}
	t.Logf("pages in the global view: %v", perSLO)

	queries, err := render.Queries(out.Files)
	if err != nil {
		t.Fatal(err)
	}
	clustersSeen := map[string]bool{}
	for _, q := range queries {
		res, err := promserver.Query(global, render.Evaluable(q, time.Minute))
		if err != nil {
			t.Errorf("dashboard query fails on the global view: %v\n%s", err, q)
			continue
		}
		for _, s := range res {
			if s.Metric["slo"] == "" {
				continue
			}
			if s.Metric["cluster"] == "" {
				t.Errorf("a series of SLO %s has no cluster: %v\n%s", s.Metric["slo"], s.Metric, q)
			}
			clustersSeen[s.Metric["cluster"]] = true
		}
	}
	if !clustersSeen["a"] || !clustersSeen["b"] {
		t.Errorf("the dashboards show clusters %v, want a and b", clustersSeen)
	}
	t.Logf("%d dashboard queries evaluated on the global view", len(queries))
}
