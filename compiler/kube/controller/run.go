package controller

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// RunOptions configure a running controller.
type RunOptions struct {
	Options
	// Namespace whose InferenceSLOs are reconciled.
	Namespace string
	// WebhookPort serves the admission webhook (TLS, with tls.crt and
	// tls.key from CertDir) at WebhookPath; 0 serves none.
	WebhookPort int
	CertDir     string
	// MetricsAddr and ProbeAddr serve controller-runtime's metrics and
	// /healthz, /readyz; "0" or "" turns them off.
	MetricsAddr, ProbeAddr string
}

// Run reconciles the namespace's InferenceSLOs until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, o RunOptions) error {
	if o.MetricsAddr == "" {
		o.MetricsAddr = "0"
	}
	mo := ctrl.Options{
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{o.Namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress: o.ProbeAddr,
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
	r := &Reconciler{Client: mgr.GetClient(), Options: o.Options}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if o.WebhookPort > 0 {
		mgr.GetWebhookServer().Register(WebhookPath, Webhook{Options: o.Options})
	}
	return mgr.Start(ctx)
}

// DryRun reconciles every InferenceSLO of a namespace once, writing what
// would be applied under dir (<kind>/<namespace>/<name>.yaml) and changing
// nothing in the cluster. It returns the names of the specs with errors,
// whose messages it hands to report.
func DryRun(ctx context.Context, c client.Client, namespace, dir string, opts Options, report func(name, message string)) ([]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(GVK.GroupVersion().WithKind(Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", Resource, namespace, err)
	}
	r := &Reconciler{Client: c, Options: opts, DryRun: dir}
	var bad []string
	for i := range list.Items {
		obj := &list.Items[i]
		d, err := Build(obj, opts)
		if err != nil {
			bad = append(bad, obj.GetName())
			report(obj.GetName(), d.Problems.Errors().Report())
			continue
		}
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}); err != nil {
			return bad, err
		}
	}
	return bad, nil
}
