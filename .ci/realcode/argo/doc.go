// Package argo runs Argo Rollouts' own Prometheus metric provider
// (github.com/argoproj/argo-rollouts metricproviders/prometheus) on the
// AnalysisTemplates `inferslo compile --analysis-templates` writes: decoded
// into Argo's own types, each metric measured against a Prometheus API
// answering a healthy canary's budget and a burning one's. It is a module of
// its own: Argo Rollouts needs its own replace directives (k8s.io), which
// must not reach inferslo's module.
package argo
