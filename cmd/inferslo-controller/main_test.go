package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/rogpeppe/go-internal/testscript"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"inferslo-controller": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the command as a user would: testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}

// TestTheManifestsDeploymentRunsTheFlagsItWasPrintedWith parses the
// Deployment's arguments with the controller's own command line.
func TestTheManifestsDeploymentRunsTheFlagsItWasPrintedWith(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--print-manifest", "--namespace", "llm", "--image", "example.com/c:1", "--rule-label", "release=kps", "--no-dashboards"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var args []string
	for _, doc := range strings.Split(stdout.String(), "\n---\n") {
		var d appsv1.Deployment
		if strings.Contains(doc, "\nkind: Deployment\n") {
			if err := yaml.UnmarshalStrict([]byte(doc), &d); err != nil {
				t.Fatal(err)
			}
			args = d.Spec.Template.Spec.Containers[0].Args
		}
	}
	var c cli
	p, err := kong.New(&c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse(args); err != nil {
		t.Fatalf("the Deployment's args %v: %v", args, err)
	}
	if c.Namespace != "llm" || !c.LeaderElect || c.RuleLabel["release"] != "kps" || c.Dashboards || !c.OpenSLO || c.WebhookPort == 0 || c.CertDir == "" || c.ProbeAddr == "" {
		t.Errorf("the Deployment runs %+v", c)
	}
}
