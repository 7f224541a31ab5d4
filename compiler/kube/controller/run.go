package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"
)

// RunOptions configure a running controller.
type RunOptions struct {
	Options
	// Namespace whose InferenceSLOs (and OpenSLO objects) are reconciled.
	Namespace string
	// OpenSLO reconciles the namespace's OpenSLO objects too (their CRDs
	// must be installed).
	OpenSLO bool
	// WebhookPort serves the admission webhook (TLS, with tls.crt and
	// tls.key from CertDir) at WebhookPath; 0 serves none.
	WebhookPort int
	CertDir     string
	// LeaderElection runs one active replica: the others wait on a Lease
	// in Namespace.
	LeaderElection bool
	// MetricsAddr and ProbeAddr serve controller-runtime's metrics and
	// /healthz, /readyz; "0" or "" turns them off.
	MetricsAddr, ProbeAddr string
}

// Run reconciles the namespace's InferenceSLOs until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, o RunOptions) error {
	o.MetricsAddr = cmp.Or(o.MetricsAddr, "0")
	mo := ctrl.Options{
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{o.Namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress: o.ProbeAddr,
		LeaderElection:         o.LeaderElection,
		LeaderElectionID:       Name + "-" + o.Namespace,
		// The Lease lives in the namespace reconciled, where the
		// manifest's binding grants it.
		LeaderElectionNamespace: o.Namespace,
	}
	if o.WebhookPort > 0 {
		mo.WebhookServer = webhook.NewServer(webhook.Options{Port: o.WebhookPort, CertDir: o.CertDir})
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if o.ProbeAddr != "" && o.ProbeAddr != "0" {
		ok := func(*http.Request) error { return nil }
		if err := mgr.AddHealthzCheck("ping", ok); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("ping", ok); err != nil {
			return err
		}
	}
	r := &Reconciler{Client: mgr.GetClient(), Options: o.Options, Events: mgr.GetEventRecorderFor("inferslo")}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if o.OpenSLO {
		or := &OpenSLOReconciler{Client: mgr.GetClient(), Options: o.Options, Events: r.Events}
		if err := or.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("controller: %w", err)
		}
	}
	if o.WebhookPort > 0 {
		mgr.GetWebhookServer().Register(WebhookPath, Webhook{Options: o.Options})
	}
	return mgr.Start(ctx)
}

// DryRun builds what every InferenceSLO of a namespace (and, with
// openSLO, its OpenSLO objects) yields and writes each object, owner
// references included, under dir (<kind>/<namespace>/<name>.yaml),
// changing nothing in the cluster. It returns the names of the specs with
// errors, whose validate messages it hands to report.
func DryRun(ctx context.Context, c client.Client, namespace, dir string, openSLO bool, opts Options, report func(name, message string)) ([]string, error) {
	list, err := listOf(ctx, c, GVK, namespace)
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", Resource, namespace, err)
	}
	var bad []string
	for i := range list.Items {
		obj := &list.Items[i]
		d, err := Build(obj, opts)
		if errors.Is(err, ErrInvalid) {
			bad = append(bad, obj.GetName())
			report(obj.GetName(), d.Problems.Errors().Report())
			continue
		}
		if err != nil {
			return bad, err
		}
		for _, o := range d.Objects {
			own(o, obj)
			if err := write(dir, o); err != nil {
				return bad, err
			}
		}
	}
	if !openSLO {
		return bad, nil
	}
	objs, err := ListOpenSLO(ctx, c, namespace)
	if err != nil {
		return bad, err
	}
	slos := slosOf(objs)
	if len(slos) == 0 {
		return bad, nil
	}
	d, err := BuildOpenSLO(objs, namespace, opts)
	if errors.Is(err, ErrInvalid) {
		report(OpenSLORequestName, d.Problems.Errors().Report())
		return append(bad, OpenSLORequestName), nil
	}
	if err != nil {
		return bad, err
	}
	for _, o := range d.Objects {
		ownAll(o, slos)
		if err := write(dir, o); err != nil {
			return bad, err
		}
	}
	return bad, nil
}

// write puts an object at dir/<kind>/<namespace>/<name>.yaml.
func write(dir string, o *unstructured.Unstructured) error {
	data, err := yaml.Marshal(o.Object)
	if err != nil {
		return err
	}
	p := filepath.Join(dir, o.GetKind(), o.GetNamespace(), o.GetName()+".yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}
