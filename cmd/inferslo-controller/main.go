// Command inferslo-controller reconciles a namespace's InferenceSLO and
// OpenSLO objects into the PrometheusRules, ScaledObjects and Grafana
// dashboard ConfigMaps `inferslo compile` writes, and
// serves the admission webhook that refuses a spec `inferslo validate`
// refuses. It is a binary of its own so the CLI links no Kubernetes client.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/alecthomas/kong"
	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/inferslo/inferslo/compiler/kube/controller"
	"github.com/inferslo/inferslo/compiler/simulate/prom"
	"github.com/inferslo/inferslo/spec"
)

type cli struct {
	Namespace      string            `help:"Namespace whose InferenceSLO and OpenSLO objects are reconciled; what they yield goes there too." placeholder:"NS"`
	DryRun         string            `name:"dry-run" help:"Apply nothing: reconcile every spec once, write what would be applied under this folder (<kind>/<namespace>/<name>.yaml) and exit." placeholder:"DIR"`
	RuleLabel      map[string]string `name:"rule-label" help:"Label put on every PrometheusRule (a Prometheus' ruleSelector, e.g. release=kube-prometheus-stack), repeatable." placeholder:"KEY=VALUE"`
	WebhookPort    int               `name:"webhook-port" help:"Serve the validating admission webhook (TLS: tls.crt and tls.key from --cert-dir) on this port at /validate-inferenceslo; 0 serves none." default:"0"`
	CertDir        string            `name:"cert-dir" help:"Folder of the webhook's tls.crt and tls.key." placeholder:"DIR"`
	MetricsAddr    string            `name:"metrics-addr" help:"Address of the controller's metrics; 0 turns them off." default:"0"`
	ProbeAddr      string            `name:"probe-addr" help:"Address of /healthz and /readyz; empty turns them off." placeholder:"ADDR"`
	Dashboards     bool              `name:"dashboards" help:"Write each service's Grafana dashboard (compile's grafana/<service>.json) as a ConfigMap for Grafana's dashboard sidecar." default:"true" negatable:""`
	DashboardLabel map[string]string `name:"dashboard-label" help:"Label of the dashboard ConfigMaps, the one the sidecar's label (and labelValue) select; default grafana_dashboard=1." placeholder:"KEY=VALUE"`
	OpenSLO        bool              `name:"openslo" help:"Reconcile the namespace's OpenSLO objects (openslo.com/v1) too; their CRDs must be installed." default:"true" negatable:""`
	LeaderElect    bool              `name:"leader-elect" help:"Run one active replica: the others wait on a Lease in the namespace."`
	PrintManifest  bool              `name:"print-manifest" help:"Print the install manifest (the CRDs, ServiceAccount, ClusterRole and its binding in --namespace, Deployment, Service and ValidatingWebhookConfiguration) for --image, with this command line's rule, dashboard and OpenSLO flags, and exit."`
	Image          string            `help:"Image of inferslo-controller in the manifest." placeholder:"IMAGE"`
	Replicas       int32             `help:"Replicas of the manifest's Deployment (leader election is on)." default:"1"`
	CertManager    bool              `name:"cert-manager" help:"Have the manifest's webhook certificate issued by cert-manager (a self-signed Issuer and a Certificate); without it, provide the Secret inferslo-controller-webhook-tls and the webhook's caBundle." default:"true" negatable:""`
	PrintCRD       bool              `name:"print-crd" help:"Print the CustomResourceDefinitions (InferenceSLO and the OpenSLO kinds) and exit."`
	Catalog        []string          `help:"Engine catalog file declaring your own engines' metrics (the format of spec/engine/catalog.yaml), repeatable." type:"existingfile" placeholder:"FILE"`
}

// errReported: the problems were printed already.
var errReported = errors.New("problems reported")

func main() {
	prom.DisableTracing()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs a command line: 0 done, 1 specs with problems or a failure, 2 a
// bad command line.
func run(args []string, stdout, stderr io.Writer) int {
	var c cli
	exit := -1
	p, err := kong.New(&c, kong.Name("inferslo-controller"),
		kong.Description("Reconcile InferenceSLO and OpenSLO objects into PrometheusRules, ScaledObjects and dashboard ConfigMaps; serve the InferenceSLO admission webhook."),
		kong.Writers(stdout, stderr), kong.Exit(func(code int) { exit = code }))
	if err != nil {
		fmt.Fprintf(stderr, "inferslo-controller: %v\n", err)
		return 2
	}
	if _, err := p.Parse(args); exit >= 0 {
		return exit
	} else if err != nil {
		fmt.Fprintf(stderr, "inferslo-controller: %v\n", err)
		return 2
	}
	if err := c.run(stdout, stderr); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintf(stderr, "inferslo-controller: %v\n", err)
		}
		return 1
	}
	return 0
}

// run reconciles in the cluster of the kubeconfig (KUBECONFIG,
// ~/.kube/config or the pod's service account).
func (c *cli) run(stdout, stderr io.Writer) error {
	if c.PrintCRD {
		crds, err := controller.CommittedCRDs()
		if err != nil {
			return err
		}
		for i, crd := range crds {
			if i > 0 {
				fmt.Fprintln(stdout, "---")
			}
			if _, err := stdout.Write(crd); err != nil {
				return err
			}
		}
		return nil
	}
	if c.Namespace == "" {
		return fmt.Errorf("--namespace is required: the controller reconciles one namespace")
	}
	if c.PrintManifest {
		if c.Image == "" {
			return fmt.Errorf("--print-manifest needs --image")
		}
		out, err := controller.Manifest(controller.ManifestOptions{
			Namespace: c.Namespace, Image: c.Image, Replicas: c.Replicas, Args: c.passedOn(), CertManager: c.CertManager,
		})
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}
	cat, err := spec.Catalog(c.Catalog...)
	if err != nil {
		return err
	}
	opts := controller.Options{Labels: c.RuleLabel, Catalog: cat}
	if c.Dashboards {
		opts.DashboardLabels = c.DashboardLabel
		if len(opts.DashboardLabels) == 0 {
			opts.DashboardLabels = controller.DefaultDashboardLabel
		}
	}
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(stderr, nil)))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.DryRun != "" {
		cl, err := client.New(cfg, client.Options{})
		if err != nil {
			return fmt.Errorf("controller: %w", err)
		}
		bad, err := controller.DryRun(ctx, cl, c.Namespace, c.DryRun, c.OpenSLO, opts, func(_, msg string) { fmt.Fprint(stderr, msg) })
		if err != nil {
			return err
		}
		if len(bad) > 0 {
			fmt.Fprintf(stderr, "%d InferenceSLO(s) with problems\n", len(bad))
			return errReported
		}
		fmt.Fprintf(stderr, "wrote what would be applied to %s\n", c.DryRun)
		return nil
	}
	return controller.Run(ctx, cfg, controller.RunOptions{
		Options: opts, Namespace: c.Namespace, OpenSLO: c.OpenSLO, LeaderElection: c.LeaderElect, WebhookPort: c.WebhookPort, CertDir: c.CertDir,
		MetricsAddr: c.MetricsAddr, ProbeAddr: c.ProbeAddr,
	})
}

// passedOn are the flags the manifest's Deployment runs the controller
// with: the ones that shape what it applies.
func (c *cli) passedOn() []string {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(c.RuleLabel)) {
		args = append(args, "--rule-label="+k+"="+c.RuleLabel[k])
	}
	if !c.Dashboards {
		args = append(args, "--no-dashboards")
	}
	for _, k := range slices.Sorted(maps.Keys(c.DashboardLabel)) {
		args = append(args, "--dashboard-label="+k+"="+c.DashboardLabel[k])
	}
	if !c.OpenSLO {
		args = append(args, "--no-openslo")
	}
	return args
}
