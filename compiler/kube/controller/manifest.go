package controller

import (
	"bytes"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Name names the controller's ServiceAccount, ClusterRole, Deployment,
// Service and webhook configuration in the install manifest.
const Name = "inferslo-controller"

// In-container paths and ports the manifest's Deployment uses.
const (
	webhookPort = 9443
	probePort   = 8081
	certDir     = "/etc/inferslo/webhook-tls"
)

// ManifestOptions shape the install manifest.
type ManifestOptions struct {
	// Namespace the controller runs in and reconciles.
	Namespace string
	// Image of inferslo-controller.
	Image    string
	Replicas int32
	// Args are further command-line flags of the controller (rule and
	// dashboard labels, catalogs).
	Args []string
	// CertManager adds a self-signed cert-manager Issuer and Certificate
	// for the webhook's serving certificate and has cert-manager inject
	// its CA into the webhook configuration; without it the Secret
	// <Name>-webhook-tls and the caBundle are the installer's.
	CertManager bool
}

// Rules are the RBAC rules the controller needs, exactly: its informers
// list and watch the spec kinds and the kinds it applies; it gets an
// InferenceSLO and lists a namespace's OpenSLO objects, writes the Ready
// condition of InferenceSLOs and SLOs, gets, creates, updates and prunes
// what it applies, records events and, with --leader-elect, holds a Lease.
func Rules() []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	add := func(group string, resources, verbs []string) {
		for i := range rules {
			if rules[i].APIGroups[0] == group && slices.Equal(rules[i].Verbs, verbs) {
				rules[i].Resources = append(rules[i].Resources, resources...)
				return
			}
		}
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: verbs})
	}
	for _, k := range Kinds {
		verbs := []string{"list", "watch"}
		if k.GVK() == GVK {
			verbs = []string{"get", "list", "watch"}
		}
		add(k.Group, []string{k.Plural}, verbs)
	}
	for _, k := range Kinds {
		// The Ready condition goes on InferenceSLOs and OpenSLO SLOs.
		if k.GVK() == GVK || k.GVK() == SLOGVK {
			add(k.Group, []string{k.Plural + "/status"}, []string{"update"})
		}
	}
	for _, gvk := range Owned {
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		add(gvk.Group, []string{plural.Resource}, []string{"get", "list", "watch", "create", "update", "delete"})
	}
	add("", []string{"events"}, []string{"create", "patch"})
	add("coordination.k8s.io", []string{"leases"}, []string{"get", "create", "update"})
	return rules
}

// Manifest is the install manifest: the CustomResourceDefinitions, the
// ServiceAccount, ClusterRole (Rules) bound in the namespace, the
// Deployment (leader election on, the webhook served), the webhook's
// Service and ValidatingWebhookConfiguration, and with CertManager its
// serving certificate. It is generated from the same tables as the
// controller, so it cannot drift from what the controller reads and
// writes.
func Manifest(o ManifestOptions) ([]byte, error) {
	if o.Namespace == "" || o.Image == "" {
		return nil, fmt.Errorf("manifest: a namespace and an image are required")
	}
	o.Replicas = max(o.Replicas, 1)
	var buf bytes.Buffer
	crds, err := CommittedCRDs()
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		buf.WriteString("---\n")
		buf.Write(crd)
	}
	labels := map[string]string{"app.kubernetes.io/name": Name}
	om := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels}
	}
	cluster := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Labels: labels} }
	tlsSecret := Name + "-webhook-tls"
	args := append([]string{
		"--namespace=" + o.Namespace,
		"--leader-elect",
		fmt.Sprintf("--webhook-port=%d", webhookPort),
		"--cert-dir=" + certDir,
		fmt.Sprintf("--probe-addr=:%d", probePort),
	}, o.Args...)
	noRoot, noEscalation := true, false
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(probePort)}}}
	}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	path := WebhookPath
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: cluster(Name + "-" + o.Namespace),
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "inferenceslos.inferslo.dev",
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service: &admissionregistrationv1.ServiceReference{Namespace: o.Namespace, Name: Name, Path: &path},
			},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": o.Namespace}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{Group}, APIVersions: []string{Version}, Resources: []string{Resource}},
			}},
		}},
	}
	if o.CertManager {
		vwc.Annotations = map[string]string{"cert-manager.io/inject-ca-from": o.Namespace + "/" + Name}
	}
	objs := []runtime.Object{
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: om(Name)},
		&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: cluster(Name), Rules: Rules()},
		// Bound in the namespace only: the controller reconciles one.
		&rbacv1.RoleBinding{
			TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: om(Name),
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: Name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: Name, Namespace: o.Namespace}},
		},
		&appsv1.Deployment{
			TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: om(Name),
			Spec: appsv1.DeploymentSpec{
				Replicas: &o.Replicas,
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						ServiceAccountName: Name,
						SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: &noRoot},
						Containers: []corev1.Container{{
							Name: "controller", Image: o.Image, Args: args,
							Ports:           []corev1.ContainerPort{{Name: "webhook", ContainerPort: webhookPort}, {Name: "probes", ContainerPort: probePort}},
							LivenessProbe:   probe("/healthz"),
							ReadinessProbe:  probe("/readyz"),
							SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &noEscalation, ReadOnlyRootFilesystem: &noRoot},
							VolumeMounts:    []corev1.VolumeMount{{Name: "webhook-tls", MountPath: certDir, ReadOnly: true}},
						}},
						Volumes: []corev1.Volume{{Name: "webhook-tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: tlsSecret}}}},
					},
				},
			},
		},
		&corev1.Service{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: om(Name),
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "webhook", Port: 443, TargetPort: intstr.FromString("webhook")}}},
		},
		vwc,
	}
	for _, obj := range objs {
		if err := writeDoc(&buf, obj); err != nil {
			return nil, err
		}
	}
	if o.CertManager {
		issuer := map[string]any{
			"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
			"metadata": map[string]any{"name": Name, "namespace": o.Namespace},
			"spec":     map[string]any{"selfSigned": map[string]any{}},
		}
		cert := map[string]any{
			"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
			"metadata": map[string]any{"name": Name, "namespace": o.Namespace},
			"spec": map[string]any{
				"secretName": tlsSecret,
				"dnsNames":   []any{Name + "." + o.Namespace + ".svc", Name + "." + o.Namespace + ".svc.cluster.local"},
				"issuerRef":  map[string]any{"kind": "Issuer", "name": Name},
			},
		}
		for _, m := range []map[string]any{issuer, cert} {
			if err := writeDoc(&buf, m); err != nil {
				return nil, err
			}
		}
	}
	return buf.Bytes(), nil
}

// writeDoc writes one YAML document, without the empty status and
// creation time a typed object carries.
func writeDoc(buf *bytes.Buffer, obj any) error {
	m, ok := obj.(map[string]any)
	if !ok {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return err
		}
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "creationTimestamp")
		}
		if spec, ok := m["spec"].(map[string]any); ok {
			if tmpl, ok := spec["template"].(map[string]any); ok {
				if md, ok := tmpl["metadata"].(map[string]any); ok {
					delete(md, "creationTimestamp")
				}
			}
		}
	}
	data, err := yaml.Marshal(m)
	if err != nil {
		return err
	}
	buf.WriteString("---\n")
	buf.Write(data)
	return nil
}
