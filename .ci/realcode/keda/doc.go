// Package keda runs KEDA's own Prometheus scaler (github.com/kedacore/keda/v2
// pkg/scalers) on the ScaledObjects compiled from the bundled examples,
// against a real Prometheus server loaded with synthetic engine series and
// the generated rules. It is a module of its own: KEDA needs its own
// replace directives (k8s.io, controller-runtime, an older Prometheus),
// which must not reach inferslo's module. CI runs it from .ci/run.
package keda
